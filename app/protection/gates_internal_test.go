package protection

import (
	"log/slog"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// A rate token reserved for an intent is its own from the reserved time on,
// not before: when the intent is judged again early (a refresh put it back
// at its stored due time), it waits for that time again, and the token
// then lets it through without taking another.
func TestPrepaidRateTokenIsSpentNoEarlierThanReserved(t *testing.T) {
	g := NewGates(Config{Limits: []GatewayLimit{{GatewayType: core.GatewaySMS, Rate: 2, Burst: 1}}},
		slog.New(slog.DiscardHandler), ports.NopMetrics{})
	c := core.Contract{GatewayType: core.GatewaySMS, GatewayURL: "http://sms.test"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if v := g.Admit("a", c, t0); v.Kind != Call {
		t.Fatalf("first call: %+v, want Call (the burst)", v)
	}
	first := g.Admit("b", c, t0)
	if first.Kind != WaitUntil || !first.Until.Equal(t0.Add(500*time.Millisecond)) {
		t.Fatalf("second intent: %+v, want to wait for 500ms", first)
	}
	if v := g.Admit("b", c, t0.Add(100*time.Millisecond)); v.Kind != WaitUntil || !v.Until.Equal(first.Until) {
		t.Fatalf("judged again early: %+v, want to wait for its reserved %s again", v, first.Until.Sub(t0))
	}
	if v := g.Admit("b", c, first.Until); v.Kind != Call {
		t.Fatalf("at its reserved time: %+v, want Call", v)
	}
	if v := g.Admit("c", c, first.Until); v.Kind != WaitUntil || !v.Until.Equal(t0.Add(time.Second)) {
		t.Fatalf("third intent: %+v, want the next token at 1s (b took none twice)", v)
	}
}

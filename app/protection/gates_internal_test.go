package protection

import (
	"errors"
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
	if v := g.Admit(core.Intent{IntentID: "a", Contract: c}, t0); v.Kind != Call {
		t.Fatalf("first call: %+v, want Call (the burst)", v)
	}
	first := g.Admit(core.Intent{IntentID: "b", Contract: c}, t0)
	if first.Kind != WaitUntil || !first.Until.Equal(t0.Add(500*time.Millisecond)) {
		t.Fatalf("second intent: %+v, want to wait for 500ms", first)
	}
	if v := g.Admit(core.Intent{IntentID: "b", Contract: c}, t0.Add(100*time.Millisecond)); v.Kind != WaitUntil || !v.Until.Equal(first.Until) {
		t.Fatalf("judged again early: %+v, want to wait for its reserved %s again", v, first.Until.Sub(t0))
	}
	if v := g.Admit(core.Intent{IntentID: "b", Contract: c}, first.Until); v.Kind != Call {
		t.Fatalf("at its reserved time: %+v, want Call", v)
	}
	if v := g.Admit(core.Intent{IntentID: "c", Contract: c}, first.Until); v.Kind != WaitUntil || !v.Until.Equal(t0.Add(time.Second)) {
		t.Fatalf("third intent: %+v, want the next token at 1s (b took none twice)", v)
	}
}

// An open breaker lets an intent's last try through (core.LastTry) and
// defers the other due attempts; the recheck before the call keeps it, and
// its success closes the breaker.
func TestOpenBreakerLetsTheLastTryThrough(t *testing.T) {
	breaker := core.BreakerConfig{Threshold: 1, Window: time.Minute, OpenFor: time.Hour, MaxOpenFor: time.Hour}
	g := NewGates(Config{Breaker: &breaker}, slog.New(slog.DiscardHandler), ports.NopMetrics{})
	c := core.Contract{GatewayType: core.GatewaySMS, GatewayURL: "http://sms.test", Policy: core.PolicyDeadline, MaxAcceptanceSeconds: 30}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	in := core.Intent{IntentID: "a", Contract: c, CreatedAt: t0}
	first := g.Admit(in, t0)
	g.Report(c, first, true, core.AttemptResult{Err: errors.New("HTTP 503")}, t0) // opens, probe in an hour
	if v := g.Admit(in, t0.Add(10*time.Second)); v.Kind != Defer {
		t.Fatalf("before the last try: %+v, want Defer", v)
	}
	last := t0.Add(30*time.Second - core.LastTryLead)
	v := g.Admit(in, last)
	if v.Kind != Call || !v.lastTry {
		t.Fatalf("at the last try: %+v, want Call as a last try", v)
	}
	if re := g.Recheck(c, v, last); re.Kind != Call {
		t.Fatalf("the recheck took the last try back: %+v", re)
	}
	g.Report(c, v, true, core.AttemptResult{Outcome: &core.Outcome{Status: core.OutcomeAccepted}}, last)
	if s := g.Status(); len(s) != 1 || s[0].Executor.Breaker != core.BreakerClosed {
		t.Fatalf("after the last try's success: %+v, want the breaker closed", s[0].Executor)
	}
}

// A gateway that answers busy with Retry-After is waited for as asked, up
// to the configured bound, by every intent for it: its breaker hears
// nothing (the gateway is up), the recheck before a call defers too, and
// an intent's last try is made even so.
func TestBusyGatewayIsWaitedForAsAsked(t *testing.T) {
	breaker := core.BreakerConfig{Threshold: 1, Window: time.Minute, OpenFor: time.Hour, MaxOpenFor: time.Hour}
	g := NewGates(Config{Breaker: &breaker, MaxRetryAfter: 20 * time.Second}, slog.New(slog.DiscardHandler), ports.NopMetrics{})
	c := core.Contract{GatewayType: core.GatewaySMS, GatewayURL: "http://sms.test", Policy: core.PolicyDeadline, MaxAcceptanceSeconds: 60}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := core.Intent{IntentID: "a", Contract: c, CreatedAt: t0}
	b := core.Intent{IntentID: "b", Contract: c, CreatedAt: t0}
	first := g.Admit(a, t0)
	held := g.Admit(b, t0) // admitted before the busy answer, called after it
	g.Report(c, first, true, core.AttemptResult{Err: busyErr(10 * time.Second)}, t0)
	if until, ok := g.BusyUntil(c.GatewayURL, t0); !ok || !until.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("BusyUntil = %v, %v; want 10s on", until, ok)
	}
	if v := g.Admit(a, t0.Add(time.Second)); v.Kind != Defer || v.Reason != "retry_after" || !v.Until.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("while busy: %+v, want Defer until 10s for retry_after", v)
	}
	if v := g.Recheck(c, held, t0.Add(time.Second)); v.Kind != Defer || v.Reason != "retry_after" {
		t.Fatalf("recheck while busy: %+v, want Defer", v)
	}
	if st := g.Status(); len(st) != 1 || st[0].Executor.Breaker != core.BreakerClosed || st[0].Executor.RecentCalls != 0 {
		t.Fatalf("status after a busy answer: %+v, want a closed breaker that heard nothing (the gateway is up)", st[0].Executor)
	}
	if v := g.Admit(a, t0.Add(10*time.Second)); v.Kind != Call {
		t.Fatalf("after the wait: %+v, want Call", v)
	}
	g.Report(c, Verdict{Kind: Call}, true, core.AttemptResult{Err: busyErr(time.Hour)}, t0.Add(10*time.Second))
	if until, _ := g.BusyUntil(c.GatewayURL, t0.Add(10*time.Second)); !until.Equal(t0.Add(30 * time.Second)) {
		t.Fatalf("an hour's Retry-After waits until %v, want the 20s bound", until.Sub(t0))
	}
	if v := g.Admit(a, t0.Add(60*time.Second-core.LastTryLead)); v.Kind != Call {
		t.Fatalf("at the last try: %+v, want Call", v)
	}
}

// busyErr is a gateway error that asks for wait.
func busyErr(wait time.Duration) error { return busyError(wait) }

type busyError time.Duration

func (e busyError) Error() string             { return "HTTP 429" }
func (e busyError) RetryAfter() time.Duration { return time.Duration(e) }

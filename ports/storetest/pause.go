package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// RunPauses holds a ports.PauseStore to its contract: pauses by type and by
// URL, idempotent pause, resume, and that pauses survive a restart when the
// harness can restart.
func RunPauses(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	t.Run("Pauses", func(t *testing.T) { testPauses(t, newHarness(t)) })
}

func testPauses(t *testing.T, h Harness) {
	ps, ok := h.Store.(ports.PauseStore)
	if !ok {
		t.Skip("this store does not implement ports.PauseStore")
	}
	ctx := context.Background()
	if got, err := ps.ListPauses(ctx); err != nil || len(got) != 0 {
		t.Fatalf("pauses of an empty store: %v %v", got, err)
	}
	const url = "http://sms-a.example:8080"
	first, err := ps.PauseGateway(ctx, core.GatewayPause{GatewayURL: url})
	if err != nil || first.GatewayURL != url || first.PausedAt.IsZero() {
		t.Fatalf("pause by URL: %+v %v", first, err)
	}
	again, err := ps.PauseGateway(ctx, core.GatewayPause{GatewayURL: url})
	if err != nil || !again.PausedAt.Equal(first.PausedAt) {
		t.Fatalf("pausing again must keep the first pause: %+v %v", again, err)
	}
	if _, err := ps.PauseGateway(ctx, core.GatewayPause{GatewayType: core.GatewayPush}); err != nil {
		t.Fatal(err)
	}
	var fe *core.FieldError
	if _, err := ps.PauseGateway(ctx, core.GatewayPause{}); !errors.As(err, &fe) {
		t.Fatalf("a pause of nothing: %v, want a field error", err)
	}
	if h.Restart != nil {
		h = h.Restart(t)
		ps = h.Store.(ports.PauseStore)
	}
	got, err := ps.ListPauses(ctx)
	if err != nil || len(got) != 2 || got[0].GatewayType != core.GatewayPush || got[1].GatewayURL != url ||
		!got[1].PausedAt.Equal(first.PausedAt) {
		t.Fatalf("pauses = %+v %v, want push then the URL", got, err)
	}
	if ok, err := ps.ResumeGateway(ctx, "", url); err != nil || !ok {
		t.Fatalf("resume the URL: %v %v", ok, err)
	}
	if ok, err := ps.ResumeGateway(ctx, "", url); err != nil || ok {
		t.Fatalf("resume twice: %v %v, want false", ok, err)
	}
	if ok, err := ps.ResumeGateway(ctx, core.GatewaySMS, ""); err != nil || ok {
		t.Fatalf("resume of a type never paused: %v %v", ok, err)
	}
	if got, _ := ps.ListPauses(ctx); len(got) != 1 || got[0].GatewayType != core.GatewayPush {
		t.Fatalf("after resume: %+v", got)
	}
}

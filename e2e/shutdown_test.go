package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/client"
)

// TestShutdownSettlesAnAttemptInFlight stops the service while a gateway
// call hangs. The stop must not wait for the gateway's timeout: the attempt
// is ended and recorded (as an attempt error) and the lease released, so a
// restarted instance leads at once and retries the intent to acceptance.
func TestShutdownSettlesAnAttemptInFlight(t *testing.T) {
	sim := startSimulator(t)
	dir := t.TempDir()
	registry := filepath.Join(dir, "targets.json")
	writeRegistry(t, registry, standardTargets(sim))
	cfg := testConfig(dir, registry)
	cfg.GatewayTimeout = 10 * time.Minute // only the shutdown can end the call
	cfg.ShutdownTimeout = 2 * time.Second // of which the call may drain for 1 s

	first := startService(t, cfg)
	script(t, sim, "inflight-1", gatewaysim.Fault(gatewaysim.ModeHang), gatewaysim.StepAccepted)
	mustCreate(t, first.api, "inflight-1", "sms.realtime", `{}`)
	waitFor(t, first.api, "inflight-1", "in flight", func(in client.Intent) bool {
		return len(in.Attempts) == 1 && in.Attempts[0].FinishedAt == nil
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := first.srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with an attempt in flight: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("shutdown took the whole timeout instead of ending the hanging call")
	}

	second := startService(t, cfg)
	in := waitTerminal(t, second.api, "inflight-1")
	if in.Status != client.IntentStatusAccepted || len(in.Attempts) != 2 {
		t.Fatalf("after the restart: %+v", in)
	}
	if a := in.Attempts[0]; a.FinishedAt == nil || a.Error == nil || a.Outcome != nil {
		t.Fatalf("the interrupted attempt should be closed with an error: %+v", a)
	}
}

package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/core"
)

// TestRetryRoutesByTheSnapshotAcrossRegistryChangeAndRestart shows that an
// intent's attempts go to the gatewayUrl of the contract snapshot taken when
// it was submitted: registry A points sms.realtime at simulator 1, an intent
// fails its first attempt there, the service stops, the registry is
// rewritten to point at simulator 2, and the service restarts on the same
// database. The retry still goes to simulator 1; only new intents go to 2.
func TestRetryRoutesByTheSnapshotAcrossRegistryChangeAndRestart(t *testing.T) {
	sim1, sim2 := startSimulator(t), startSimulator(t)
	dir := t.TempDir()
	registry := filepath.Join(dir, "targets.json")
	writeRegistry(t, registry, standardTargets(sim1))
	cfg := testConfig(dir, registry)
	// Long enough that the retry cannot run before the stop below; the
	// check after the stop fails loudly if this machine is slower still.
	cfg.RetryDelay = 2 * time.Second

	first := startService(t, cfg)
	script(t, sim1, "route-1", gatewaysim.Rejected("provider_failure"), gatewaysim.StepAccepted)
	mustCreate(t, first.api, "route-1", "sms.realtime", `{"to":"+1"}`)
	waitFor(t, first.api, "route-1", "done with its first attempt", func(in client.Intent) bool {
		return len(in.Attempts) == 1 && in.Attempts[0].FinishedAt != nil
	})
	stopService(t, first.srv)
	if n := sim1.Reference("route-1").Submissions; n != 1 {
		t.Fatalf("simulator 1 saw %d submissions before the restart, want 1: the retry delay is too short for this machine", n)
	}

	writeRegistry(t, registry, standardTargets(sim2))
	second := startService(t, cfg)
	in := waitTerminal(t, second.api, "route-1")
	if in.Status != client.IntentStatusAccepted || len(in.Attempts) != 2 {
		t.Fatalf("after the restart: %+v", in)
	}
	if got := sim1.Reference("route-1"); got.Submissions != 2 || got.Accepted != 1 {
		t.Fatalf("simulator 1 saw %+v, want both attempts and the acceptance", got)
	}
	if got := sim2.Reference("route-1"); got.Submissions != 0 {
		t.Fatalf("simulator 2 saw %d submissions of the old intent", got.Submissions)
	}

	// New intents take the new registry.
	mustCreate(t, second.api, "route-2", "sms.realtime", `{"to":"+2"}`)
	waitTerminal(t, second.api, "route-2")
	if sim2.Reference("route-2").Submissions != 1 || sim1.Reference("route-2").Submissions != 0 {
		t.Fatal("a new intent was not routed by the rewritten registry")
	}
	if total := sim2.StatsOf(core.GatewaySMS).Total; total != 1 {
		t.Fatalf("simulator 2 saw %d submissions in all, want 1", total)
	}
}

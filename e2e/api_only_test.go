package e2e

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

// TestAPIOnlyInstanceTakesIntentsButNeverLeads checks `serve --api-only`:
// the instance accepts intents durably and reports itself a follower, but it
// never takes the lease, so nothing is sent until a leading instance on the
// same database starts, which then executes what the API-only one took.
func TestAPIOnlyInstanceTakesIntentsButNeverLeads(t *testing.T) {
	sim := startSimulator(t)
	dir := t.TempDir()
	registry := filepath.Join(dir, "targets.json")
	writeRegistry(t, registry, standardTargets(sim))
	cfg := testConfig(dir, registry)
	cfg.APIOnly = true
	cfg.HolderID = "api-only"
	apiOnly := startService(t, cfg)

	mustCreate(t, apiOnly.api, "api-only-1", "sms.realtime", `{"to":"+15550100"}`)
	// A leading instance would have taken the lease within one acquire
	// interval and sent the intent at once; give it twenty.
	window := time.Now().Add(20 * cfg.AcquireInterval)
	for time.Now().Before(window) {
		if got := readyz(t, apiOnly.api); got != "mode=follower holder_id=api-only api_only=true" {
			t.Fatalf("/readyz of an API-only instance: %q", got)
		}
		if in := getIntent(t, apiOnly.api, "api-only-1"); in.Status != client.IntentStatusPending || len(in.Attempts) != 0 {
			t.Fatalf("an API-only instance executed an intent: %+v", in)
		}
		time.Sleep(cfg.AcquireInterval)
	}
	if n := sim.Stats().Total; n != 0 {
		t.Fatalf("the gateway got %d submissions while only an API-only instance ran", n)
	}

	leaderCfg := cfg
	leaderCfg.APIOnly = false
	leaderCfg.HolderID = "leader"
	leader := startService(t, leaderCfg)
	if in := waitTerminal(t, leader.api, "api-only-1"); in.Status != client.IntentStatusAccepted || len(in.Attempts) != 1 {
		t.Fatalf("the leader did not execute what the API-only instance took: %+v", in)
	}
	if got := readyz(t, apiOnly.api); !strings.HasPrefix(got, "mode=follower holder_id=api-only") || !strings.HasSuffix(got, " api_only=true") {
		t.Fatalf("/readyz of the API-only instance beside a leader: %q", got)
	}
}

// readyz returns the /readyz body.
func readyz(t *testing.T, c *client.ClientWithResponses) string {
	t.Helper()
	res, err := c.Readyz(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("/readyz: %d %s", res.StatusCode, body)
	}
	return strings.TrimSpace(string(body))
}

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/core"
)

// TestInDoubtAttemptsAfterLeaderSIGKILL kills the leader process while all
// of its gateway calls are in flight (the simulator has accepted each and
// holds its answer back), then starts another instance on the same SQLite
// file. With the gateway's lookup, the new leader learns every acceptance:
// each intent ends accepted after one submission, with no duplicate call.
// Without it (the simulator's lookup off), each in-doubt attempt is
// retried, refused as duplicate_reference, and the intent ends exhausted
// and flagged possiblyAccepted, which the listing filters on.
func TestInDoubtAttemptsAfterLeaderSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs processes")
	}
	dir := t.TempDir()
	haBuild(t, dir, "./cmd/submission-manager")
	for _, lookup := range []bool{true, false} {
		t.Run(fmt.Sprintf("lookup=%v", lookup), func(t *testing.T) {
			runInDoubt(t, filepath.Join(dir, "submission-manager"), lookup)
		})
	}
}

func runInDoubt(t *testing.T, bin string, lookup bool) {
	const intents = 16
	dir := t.TempDir()
	// The answers are held back far longer than the test needs to see
	// every call arrive and kill the leader.
	sim, err := gatewaysim.Start(gatewaysim.Config{Latency: time.Minute, NoLookup: !lookup})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	registry := filepath.Join(dir, "targets.json")
	writeRegistry(t, registry, []registryTarget{
		{"sms.indoubt", "sms", sim.URL(core.GatewaySMS), "realtime", "max_attempts", 0, 3, smsTerminal},
	})
	db := filepath.Join(dir, "sm.db")
	start := func(name string) (*haProcess, *client.ClientWithResponses) {
		addr := haFreeAddr(t)
		p := haStartProcess(t, dir, name, bin, []string{"serve",
			"--database", "sqlite:" + db, "--registry", registry, "--listen", addr,
			"--holder-id", name, "--lease-duration", "2s", "--renew-interval", "300ms",
			"--acquire-interval", "300ms", "--retry-delay", "100ms", "--gateway-timeout", "5m",
			"--shutdown-timeout", "1s", "--log-format", "json",
		}, nil)
		haWaitHTTP(t, p, "http://"+addr+"/readyz")
		api, err := client.NewClientWithResponses("http://" + addr)
		if err != nil {
			t.Fatal(err)
		}
		return p, api
	}

	first, api := start("first")
	ids := make([]string, intents)
	for i := range ids {
		ids[i] = fmt.Sprintf("in-doubt-%d", i)
		mustCreate(t, api, ids[i], "sms.indoubt", `{"to":"+15550100"}`)
	}
	haPoll(t, "every call in flight at the gateway", func() bool { return sim.Stats().Total == intents })
	first.kill(t)

	_, api = start("second")
	for _, id := range ids {
		in := waitTerminal(t, api, id)
		calls := sim.Reference(id).Submissions
		flagged := in.PossiblyAccepted != nil && *in.PossiblyAccepted
		if lookup {
			if in.Status != client.IntentStatusAccepted || calls != 1 || len(in.Attempts) != 1 || flagged {
				t.Errorf("%s: %s after %d attempts, %d gateway calls, flagged %v; want accepted after the one call",
					id, in.Status, len(in.Attempts), calls, flagged)
			}
			continue
		}
		if in.Status != client.IntentStatusExhausted || !flagged {
			t.Errorf("%s: %s, flagged %v; want exhausted and flagged possiblyAccepted", id, in.Status, flagged)
		}
	}
	if lookup {
		return
	}
	yes := true
	res, err := api.ListIntentsWithResponse(context.Background(), &client.ListIntentsParams{PossiblyAccepted: &yes, Limit: ptrTo(100)})
	if err != nil || res.JSON200 == nil {
		t.Fatalf("listing flagged intents: %v", err)
	}
	if n := len(res.JSON200.Intents); n != intents {
		t.Fatalf("the possiblyAccepted listing has %d intents, want %d", n, intents)
	}
}

func ptrTo[T any](v T) *T { return &v }

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"path/filepath"
	"sync"
	"testing"

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
// retried and refused as duplicate_reference, and the intent is flagged
// possiblyAccepted (it ends exhausted at its deadline, flagged), which the
// listing filters on.
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
	sim, err := gatewaysim.Start(gatewaysim.Config{NoLookup: !lookup})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	// The gateway is reached through a proxy that holds every answer back
	// until released: the simulator has decided each call (accepted it)
	// while the leader still waits, as with a slow gateway.
	gw, release := holdingProxy(t, sim.URL(core.GatewaySMS))
	registry := filepath.Join(dir, "targets.json")
	writeRegistry(t, registry, []registryTarget{
		{"sms.indoubt", "sms", gw, "realtime", "deadline", 60, 0, smsTerminal},
	})
	db := filepath.Join(dir, "sm.db")
	start := func(name string) (*haProcess, *client.ClientWithResponses) {
		p := haStartProcess(t, dir, name, bin, []string{"serve",
			"--database", "sqlite:" + db, "--registry", registry, "--listen", haAnyPort,
			"--holder-id", name, "--lease-duration", "2s", "--renew-interval", "300ms",
			"--acquire-interval", "300ms", "--retry-delay", "100ms", "--gateway-timeout", "5m",
			"--shutdown-timeout", "1s", "--log-format", "json",
		}, nil)
		addr := haServeAddr(t, p)
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
	release()

	_, api = start("second")
	for _, id := range ids {
		if !lookup {
			// Each retry is refused as duplicate_reference until the
			// deadline; the flag is set by the first of them.
			in := waitFor(t, api, id, "flagged possiblyAccepted", func(in client.Intent) bool {
				return in.PossiblyAccepted != nil && *in.PossiblyAccepted
			})
			if in.Status == client.IntentStatusAccepted {
				t.Errorf("%s: accepted although the gateway's answer was lost and no lookup was possible", id)
			}
			continue
		}
		in := waitTerminal(t, api, id)
		calls := sim.Reference(id).Submissions
		if in.Status != client.IntentStatusAccepted || calls != 1 || len(in.Attempts) != 1 || in.PossiblyAccepted != nil {
			t.Errorf("%s: %s after %d attempts, %d gateway calls, possiblyAccepted %v; want accepted after the one call",
				id, in.Status, len(in.Attempts), calls, in.PossiblyAccepted)
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

// holdingProxy serves a reverse proxy to upstream that holds every answer
// until release is called (or its caller goes away); later answers pass at
// once.
func holdingProxy(t *testing.T, upstream string) (url string, release func()) {
	t.Helper()
	target, err := neturl.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(res *http.Response) error {
		select {
		case <-released:
			return nil
		case <-res.Request.Context().Done():
			return res.Request.Context().Err()
		}
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	var once sync.Once
	return srv.URL, func() { once.Do(func() { close(released) }) }
}

package command

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/submission"
	"github.com/submissionmanager/submission-manager/core"
)

// TestIntentsCommands runs `intents list|get|resubmit` against a real
// in-process service on SQLite and the gateway simulator.
func TestIntentsCommands(t *testing.T) {
	sim, err := gatewaysim.Start(gatewaysim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	dir := t.TempDir()
	registry := filepath.Join(dir, "targets.json")
	err = os.WriteFile(registry, fmt.Appendf(nil, `{"targets":[{"submissionTarget":"push.once","gatewayType":"push","gatewayUrl":%q,
		"mode":"realtime","policy":"one_shot","terminalOutcomes":[]}]}`, sim.URL(core.GatewayPush)), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultServeConfig()
	cfg.Registry, cfg.Database, cfg.Listen = registry, "sqlite:"+filepath.Join(dir, "sm.db"), "127.0.0.1:0"
	cfg.APIKeys, cfg.OperatorKeys = []string{"client-key"}, []string{"operator-key"}
	cfg.AcquireInterval = 50 * time.Millisecond
	srv, err := Start(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	client := map[string]string{APIKeyEnv: "client-key", "SUBMISSION_URL": srv.URL()}
	operator := map[string]string{APIKeyEnv: "operator-key", "SUBMISSION_URL": srv.URL()}

	for _, id := range []string{"ok-1", "dead-1", "dead-2"} {
		if id != "ok-1" {
			if err := sim.Script(id, gatewaysim.Rejected("provider_failure")); err != nil {
				t.Fatal(err)
			}
		}
		body := fmt.Sprintf(`{"intentId":%q,"submissionTarget":"push.once","payload":{"token":"t"}}`, id)
		if err := postJSON(srv.URL()+"/v1/intents", "client-key", body); err != nil {
			t.Fatal(err)
		}
	}
	// Wait, on the service, until the leader ended all three.
	sm, err := submission.New(srv.URL(), submission.WithAPIKey("client-key"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ok-1", "dead-1", "dead-2"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		in, err := sm.WaitFinal(ctx, id)
		cancel()
		if err != nil {
			t.Fatalf("%s did not end: %s %v", id, in.Status, err)
		}
	}

	code, out, errOut := run(t, client, "intents", "list", "--status", "exhausted")
	if code != ExitOK || !strings.HasPrefix(out, "INTENT ID") || !strings.Contains(out, "dead-1") || strings.Contains(out, "ok-1") {
		t.Fatalf("list --status exhausted: %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run(t, client, "intents", "get", "dead-1")
	if code != ExitOK || !strings.Contains(out, "LEADER") || !strings.Contains(out, "one_shot_completed") {
		t.Fatalf("get dead-1: %d\n%s", code, out)
	}
	if code, out, errOut := run(t, client, "intents", "resubmit", "dead-1"); code != ExitError || !strings.Contains(out, "403 Forbidden") {
		t.Fatalf("resubmit with a client key: %d %s%s", code, out, errOut)
	}
	withYes := map[string]string{"SUBMISSION_YES": "true"}
	for k, v := range operator {
		withYes[k] = v
	}
	code, _, errOut = run(t, withYes, "intents", "resubmit", "--status", "exhausted")
	if code != ExitError || !strings.Contains(errOut, "2 exhausted intent(s)") || !strings.Contains(errOut, "--yes") {
		t.Fatalf("bulk without --yes: %d %s", code, errOut)
	}
	code, out, errOut = run(t, operator, "intents", "resubmit", "--status", "exhausted", "--yes")
	if code != ExitOK || !strings.Contains(out, "resubmitted as dead-1~r1") || !strings.Contains(errOut, "2/2") || !strings.Contains(errOut, "[###") {
		t.Fatalf("bulk: %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run(t, operator, "intents", "resubmit", "dead-1", "--json")
	var again []resubmitted
	if code != ExitOK || json.Unmarshal([]byte(out), &again) != nil || len(again) != 1 || again[0].Created || again[0].ResubmittedAs != "dead-1~r1" {
		t.Fatalf("repeat: %d %s", code, out)
	}
	if code, out, errOut := run(t, operator, "intents", "resubmit", "ok-1", "--new-id", "dead-2"); code != ExitError || !strings.Contains(out, "409") {
		t.Fatalf("resubmit under a taken id: %d %s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, operator, "intents", "get"); code != ExitUsage || !strings.Contains(errOut, "exactly one intentId") {
		t.Fatalf("get without id: %d %s", code, errOut)
	}
	testIntentsListAndGet(t, srv.URL())
}

func postJSON(url, key, body string) error {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		return fmt.Errorf("POST %s: %s", url, res.Status)
	}
	return nil
}

package command

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/submission"
	"github.com/submissionmanager/submission-manager/core"
)

// TestIntentsCancelAndRunNow runs `intents cancel|run-now` against a real
// in-process service on SQLite: operator keys only, a scheduled intent is
// made due, a cancel ends a pending intent (and repeats as a success), an
// ended intent is refused, and `intents get` shows the actions.
func TestIntentsCancelAndRunNow(t *testing.T) {
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
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	for _, id := range []string{"later-1", "later-2"} {
		body := fmt.Sprintf(`{"intentId":%q,"submissionTarget":"push.once","payload":{"token":"t"},"notBefore":%q}`, id, later)
		if err := postJSON(srv.URL()+"/v1/intents", "client-key", body); err != nil {
			t.Fatal(err)
		}
	}
	if err := postJSON(srv.URL()+"/v1/intents", "client-key", `{"intentId":"done-1","submissionTarget":"push.once","payload":{}}`); err != nil {
		t.Fatal(err)
	}
	sm, err := submission.New(srv.URL(), submission.WithAPIKey("client-key"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if in, err := sm.WaitFinal(ctx, "done-1"); err != nil || in.Status != "accepted" {
		t.Fatalf("done-1: %s %v", in.Status, err)
	}

	if code, out, errOut := run(t, client, "intents", "run-now", "later-1"); code != ExitError || !strings.Contains(out, "403 Forbidden") {
		t.Fatalf("run-now with a client key: %d %s%s", code, out, errOut)
	}
	code, out, errOut := run(t, operator, "intents", "run-now", "later-1")
	if code != ExitOK || !strings.Contains(out, "later-1") || !strings.Contains(out, "due now") {
		t.Fatalf("run-now: %d\n%s%s", code, out, errOut)
	}
	// That the leader then attempts it is e2e's to show (run_now_test.go).
	if code, out, _ = run(t, client, "intents", "get", "later-1"); code != ExitOK || !strings.Contains(out, "1 run_now") {
		t.Fatalf("get shows no run now: %d\n%s", code, out)
	}
	for range 2 { // a repeat is no error
		code, out, errOut = run(t, operator, "intents", "cancel", "later-2", "--json")
		var got []acted
		if code != ExitOK || json.Unmarshal([]byte(out), &got) != nil || len(got) != 1 ||
			got[0] != (acted{IntentID: "later-2", Status: "exhausted", ExhaustedReason: "cancelled"}) {
			t.Fatalf("cancel --json: %d\n%s%s", code, out, errOut)
		}
	}
	if code, out, _ = run(t, operator, "intents", "run-now", "later-2"); code != ExitError || !strings.Contains(out, "409 Intent ended") {
		t.Fatalf("run-now of a cancelled intent: %d\n%s", code, out)
	}
	code, out, _ = run(t, operator, "intents", "cancel", "done-1", "never-submitted")
	if code != ExitError || !strings.Contains(out, "409 Intent ended") || !strings.Contains(out, "404 Intent not found") {
		t.Fatalf("cancel of an ended and a missing intent: %d\n%s", code, out)
	}
	code, out, _ = run(t, client, "intents", "get", "later-2")
	if code != ExitOK || !strings.Contains(out, "OPERATOR ACTION") || !strings.Contains(out, "1 cancel") ||
		!strings.Contains(out, "operator") || strings.Contains(out, "operator-key") {
		t.Fatalf("get shows no cancel by the operator: %d\n%s", code, out)
	}
	if code, _, errOut := run(t, operator, "intents", "cancel"); code != ExitUsage || !strings.Contains(errOut, "at least one intentId") {
		t.Fatalf("cancel without an id: %d %s", code, errOut)
	}
}

package command

import (
	"context"
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

// TestIntentsCommandsShowAndGuardALateAcceptance runs the intents commands
// against a real service whose gateway answers after the 1 s deadline: the
// intent ends exhausted and flagged; list (and its filter) and get show
// the fact and the gateway's message id; a bulk resubmission leaves it out
// and says so; resubmitting it by id is refused naming the risk and the
// flag, and goes through with --acknowledge-delivery-risk.
func TestIntentsCommandsShowAndGuardALateAcceptance(t *testing.T) {
	// The answer comes after the deadline whatever the machine's speed:
	// the latency is a lower bound.
	sim, err := gatewaysim.Start(gatewaysim.Config{Latency: 1200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	dir := t.TempDir()
	registry := filepath.Join(dir, "targets.json")
	err = os.WriteFile(registry, fmt.Appendf(nil, `{"targets":[{"submissionTarget":"sms.deadline","gatewayType":"sms","gatewayUrl":%q,
		"mode":"realtime","policy":"deadline","maxAcceptanceSeconds":1,"terminalOutcomes":[]}]}`, sim.URL(core.GatewaySMS)), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultServeConfig()
	cfg.Registry, cfg.Database, cfg.Listen = registry, "sqlite:"+filepath.Join(dir, "sm.db"), "127.0.0.1:0"
	cfg.OperatorKeys = []string{"operator-key"}
	cfg.AcquireInterval = 50 * time.Millisecond
	srv, err := Start(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	operator := map[string]string{APIKeyEnv: "operator-key", "SUBMISSION_URL": srv.URL()}
	if err := postJSON(srv.URL()+"/v1/intents", "operator-key", `{"intentId":"late-1","submissionTarget":"sms.deadline","payload":{"to":"1"}}`); err != nil {
		t.Fatal(err)
	}
	sm, err := submission.New(srv.URL(), submission.WithAPIKey("operator-key"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	in, err := sm.WaitFinal(ctx, "late-1")
	cancel()
	if err != nil || in.AcceptedMessageId == nil {
		t.Fatalf("late-1 ended %s (message %v): %v", in.Status, in.AcceptedMessageId, err)
	}
	message := *in.AcceptedMessageId

	code, out, errOut := run(t, operator, "intents", "list", "--accepted-after-deadline")
	if code != ExitOK || !strings.Contains(out, "exhausted (accepted after deadline)") || !strings.Contains(out, "late-1") {
		t.Fatalf("list --accepted-after-deadline: %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run(t, operator, "intents", "get", "late-1")
	if code != ExitOK || !strings.Contains(out, "accepted after deadline  yes (message "+message+")") || !strings.Contains(out, "deadline_exceeded") {
		t.Fatalf("get late-1: %d\n%s", code, out)
	}
	code, out, errOut = run(t, operator, "intents", "resubmit", "--status", "exhausted", "--yes")
	if code != ExitOK || strings.Contains(out, "late-1") || !strings.Contains(errOut, "0 exhausted intent(s)") ||
		!strings.Contains(errOut, "1 intent(s) the gateway may already have delivered left out") {
		t.Fatalf("bulk: %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, operator, "intents", "resubmit", "--status", "exhausted", "--acknowledge-delivery-risk"); code != ExitUsage ||
		!strings.Contains(errOut, "never takes them") {
		t.Fatalf("bulk with the acknowledgement: %d %s", code, errOut)
	}
	code, out, errOut = run(t, operator, "intents", "resubmit", "late-1")
	if code != ExitError || !strings.Contains(out, "409 Delivery risk") || !strings.Contains(out, "--acknowledge-delivery-risk") {
		t.Fatalf("resubmit without the acknowledgement: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, operator, "intents", "resubmit", "late-1", "--acknowledge-delivery-risk")
	if code != ExitOK || !strings.Contains(out, "resubmitted as late-1~r1") {
		t.Fatalf("resubmit with the acknowledgement: %d\n%s%s", code, out, errOut)
	}
}

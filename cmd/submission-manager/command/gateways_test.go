package command

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/adapters/sysclock"
	"github.com/submissionmanager/submission-manager/app/intake"
	"github.com/submissionmanager/submission-manager/app/protection"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
)

// gatewayAPI serves the real API, service and gateway service over the
// in-memory store, with a client key and an operator key (pausing is an
// operator's).
func gatewayAPI(t *testing.T) string {
	t.Helper()
	reg, err := core.NewRegistry([]core.Contract{{
		SubmissionTarget: "sms.realtime", GatewayType: core.GatewaySMS, GatewayURL: "http://127.0.0.1:8080",
		Mode: core.ModeRealtime, Policy: core.PolicyOneShot, TerminalOutcomes: []string{},
	}})
	if err != nil {
		t.Fatal(err)
	}
	store := memstore.New(sysclock.New())
	svc, err := intake.NewService(intake.ServiceConfig{Registry: reg, Store: store, Clock: sysclock.New()})
	if err != nil {
		t.Fatal(err)
	}
	gws, err := protection.NewGatewayService(protection.GatewayServiceConfig{Targets: svc.Targets, Pauses: store, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{Service: svc, Gateways: gws, APIKeys: []string{"client"}, OperatorKeys: []string{"k"}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(api)
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestGatewaysCommandsPauseListAndResume(t *testing.T) {
	url := gatewayAPI(t)
	env := map[string]string{"SUBMISSION_URL": url, "SUBMISSION_API_KEY": "k"}
	code, out, errOut := run(t, env, "gateways", "pause", "sms")
	if code != ExitOK || !strings.Contains(out, "paused sms since") {
		t.Fatalf("pause: %d %q %q", code, out, errOut)
	}
	code, out, errOut = run(t, env, "gateways", "list")
	if code != ExitOK || !strings.Contains(out, "http://127.0.0.1:8080") || !strings.Contains(out, "true") ||
		!strings.Contains(out, "paused: type sms") || !strings.Contains(out, "does not lead") {
		t.Fatalf("list: %d %q %q", code, out, errOut)
	}
	code, out, _ = run(t, env, "gateways", "resume", "--json", "sms")
	if code != ExitOK || !strings.Contains(out, `"wasPaused": true`) {
		t.Fatalf("resume: %d %q", code, out)
	}
	code, out, _ = run(t, env, "gateways", "resume", "http://127.0.0.1:8080")
	if code != ExitOK || !strings.Contains(out, "was not paused") {
		t.Fatalf("resume of a URL never paused: %d %q", code, out)
	}
}

func TestGatewaysCommandsNameWhatIsWrong(t *testing.T) {
	url := gatewayAPI(t)
	env := map[string]string{"SUBMISSION_URL": url, "SUBMISSION_API_KEY": "k"}
	if code, _, errOut := run(t, env, "gateways", "pause", "fax"); code != ExitError || !strings.Contains(errOut, "gatewayType") {
		t.Fatalf("pause fax: %d %q", code, errOut)
	}
	client := map[string]string{"SUBMISSION_URL": url, "SUBMISSION_API_KEY": "client"}
	if code, _, errOut := run(t, client, "gateways", "pause", "sms"); code != ExitError || !strings.Contains(errOut, "403") {
		t.Fatalf("pause with a client key: %d %q, want 403: pausing is an operator's", code, errOut)
	}
	if code, _, errOut := run(t, map[string]string{"SUBMISSION_URL": url}, "gateways", "list"); code != ExitError || !strings.Contains(errOut, "401") {
		t.Fatalf("list without the key: %d %q", code, errOut)
	}
	if code, _, errOut := run(t, env, "gateways", "pause"); code != ExitUsage || !strings.Contains(errOut, "one gateway type") {
		t.Fatalf("pause without an argument: %d %q", code, errOut)
	}
	if code, _, errOut := run(t, env, "gateways", "stop", "sms"); code != ExitUsage || !strings.Contains(errOut, "stop") {
		t.Fatalf("unknown subcommand: %d %q", code, errOut)
	}
	if code, _, _ := run(t, env, "gateways"); code != ExitUsage {
		t.Fatalf("no subcommand: %d", code)
	}
}

package e2e

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
	"github.com/submissionmanager/submission-manager/core"
)

// e2eRetryDelay keeps retries fast; the engine's default is 5s.
const e2eRetryDelay = 50 * time.Millisecond

// terminalWait bounds every wait for an intent to end. Waits poll; they
// never sleep a fixed time hoping work is done.
const terminalWait = 20 * time.Second

// registryTarget is one entry of a test registry.
type registryTarget struct {
	SubmissionTarget     string   `json:"submissionTarget"`
	GatewayType          string   `json:"gatewayType"`
	GatewayURL           string   `json:"gatewayUrl"`
	Mode                 string   `json:"mode"`
	Policy               string   `json:"policy"`
	MaxAcceptanceSeconds int      `json:"maxAcceptanceSeconds,omitempty"`
	MaxAttempts          int      `json:"maxAttempts,omitempty"`
	TerminalOutcomes     []string `json:"terminalOutcomes"`
}

var (
	smsTerminal  = []string{"invalid_request", "invalid_recipient", "invalid_message"}
	pushTerminal = []string{"invalid_request", "unregistered_token"}
)

// standardTargets covers every policy: a generous deadline, a one-second
// deadline (to exhaust quickly), three attempts, and one shot.
func standardTargets(sim *gatewaysim.Simulator) []registryTarget {
	sms, push := sim.URL(core.GatewaySMS), sim.URL(core.GatewayPush)
	return []registryTarget{
		{"sms.realtime", "sms", sms, "realtime", "deadline", 30, 0, smsTerminal},
		{"sms.deadline", "sms", sms, "realtime", "deadline", 1, 0, smsTerminal},
		{"sms.batch", "sms", sms, "batch", "max_attempts", 0, 3, smsTerminal},
		{"push.oneshot", "push", push, "batch", "one_shot", 0, 0, pushTerminal},
	}
}

// writeRegistry writes targets as a registry file at path.
func writeRegistry(t *testing.T, path string, targets []registryTarget) {
	t.Helper()
	data, err := json.MarshalIndent(map[string]any{"targets": targets}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// startSimulator starts both simulated gateways on free loopback ports.
func startSimulator(t *testing.T) *gatewaysim.Simulator {
	t.Helper()
	sim, err := gatewaysim.Start(gatewaysim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	return sim
}

// testConfig is a fast configuration on a fresh SQLite file in dir.
func testConfig(dir, registry string) command.ServeConfig {
	cfg := command.DefaultServeConfig()
	cfg.Registry = registry
	cfg.Database = "sqlite:" + filepath.Join(dir, "submission-manager.db")
	cfg.Listen = "127.0.0.1:0"
	cfg.RetryDelay = e2eRetryDelay
	cfg.LeaseDuration = 5 * time.Second
	cfg.RenewInterval = time.Second
	cfg.AcquireInterval = 100 * time.Millisecond
	cfg.ScheduleRefreshInterval = 100 * time.Millisecond
	cfg.GatewayTimeout = 2 * time.Second
	cfg.ShutdownTimeout = 10 * time.Second
	return cfg
}

// service is a running in-process instance and a client for it.
type service struct {
	srv *command.Server
	api *client.ClientWithResponses
}

// startService starts the real service with cfg; it is shut down when the
// test ends unless the test stops it first.
func startService(t *testing.T, cfg command.ServeConfig, opts ...client.ClientOption) service {
	t.Helper()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv, err := command.Start(context.Background(), cfg, log)
	if err != nil {
		t.Fatalf("starting the service: %v", err)
	}
	t.Cleanup(func() { stopService(t, srv) })
	api, err := client.NewClientWithResponses(srv.URL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return service{srv: srv, api: api}
}

func stopService(t *testing.T, srv *command.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Errorf("shutting the service down: %v", err)
	}
}

// startStandard starts a simulator and a service with standardTargets.
func startStandard(t *testing.T, tune ...func(*command.ServeConfig)) (service, *gatewaysim.Simulator) {
	t.Helper()
	sim := startSimulator(t)
	dir := t.TempDir()
	registry := filepath.Join(dir, "targets.json")
	writeRegistry(t, registry, standardTargets(sim))
	cfg := testConfig(dir, registry)
	for _, f := range tune {
		f(&cfg)
	}
	return startService(t, cfg), sim
}

// submit posts an intent through the generated client.
func submit(t *testing.T, c *client.ClientWithResponses, id, target, payload string) *client.SubmitIntentResponse {
	t.Helper()
	res, err := c.SubmitIntentWithResponse(context.Background(), nil, client.SubmitIntentJSONRequestBody{
		IntentId:         id,
		SubmissionTarget: target,
		Payload:          json.RawMessage(payload),
	})
	if err != nil {
		t.Fatalf("submitting %q: %v", id, err)
	}
	return res
}

// submitBody posts a raw JSON body through the generated client, for what
// the typed call cannot send: white space inside the payload (encoding/json
// compacts a json.RawMessage) and malformed documents.
func submitBody(t *testing.T, c *client.ClientWithResponses, body string) *client.SubmitIntentResponse {
	t.Helper()
	res, err := c.SubmitIntentWithBodyWithResponse(context.Background(), nil, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// mustCreate submits an intent that must be created.
func mustCreate(t *testing.T, c *client.ClientWithResponses, id, target, payload string) client.Intent {
	t.Helper()
	res := submit(t, c, id, target, payload)
	if res.StatusCode() != 201 || res.JSON201 == nil {
		t.Fatalf("submitting %q: %d %s, want 201", id, res.StatusCode(), res.Body)
	}
	return *res.JSON201
}

// getIntent reads an intent that must exist.
func getIntent(t *testing.T, c *client.ClientWithResponses, id string) client.Intent {
	t.Helper()
	res, err := c.GetIntentWithResponse(context.Background(), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.JSON200 == nil {
		t.Fatalf("GET intent %q: %d %s", id, res.StatusCode(), res.Body)
	}
	return *res.JSON200
}

// waitFor polls the intent until cond holds, failing after terminalWait.
func waitFor(t *testing.T, c *client.ClientWithResponses, id, what string, cond func(client.Intent) bool) client.Intent {
	t.Helper()
	deadline := time.Now().Add(terminalWait)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		in := getIntent(t, c, id)
		if cond(in) {
			return in
		}
		if time.Now().After(deadline) {
			body, _ := json.Marshal(in)
			t.Fatalf("intent %q: not %s within %s: %s", id, what, terminalWait, body)
		}
		<-tick.C
	}
}

// waitTerminal polls the intent until it leaves pending.
func waitTerminal(t *testing.T, c *client.ClientWithResponses, id string) client.Intent {
	t.Helper()
	return waitFor(t, c, id, "terminal", func(in client.Intent) bool { return in.Status != client.IntentStatusPending })
}

// script sets the simulator's answers for one intent.
func script(t *testing.T, sim *gatewaysim.Simulator, id string, steps ...gatewaysim.Step) {
	t.Helper()
	if err := sim.Script(id, steps...); err != nil {
		t.Fatal(err)
	}
}

// repeat returns n copies of step.
func repeat(step gatewaysim.Step, n int) []gatewaysim.Step {
	out := make([]gatewaysim.Step, n)
	for i := range out {
		out[i] = step
	}
	return out
}

// problemOf decodes a problem answer, checking status, media type and type.
func problemOf(t *testing.T, status int, contentType string, body []byte, wantStatus int, wantType string) client.Problem {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status %d, want %d: %s", status, wantStatus, body)
	}
	if contentType != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json", contentType)
	}
	var p client.Problem
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("problem %s: %v", body, err)
	}
	const base = "https://github.com/submissionmanager/submission-manager/blob/main/docs/api.md#"
	if p.Type != base+wantType || p.Status != wantStatus {
		t.Fatalf("problem %s %d, want %s %d", p.Type, p.Status, wantType, wantStatus)
	}
	return p
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/core"
)

// asBinary makes the test binary act as gateway-sim when set, so the
// signal test runs the real main in a child process.
const asBinary = "GATEWAY_SIM_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asBinary) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestOptionsDefaultsEnvAndFlags(t *testing.T) {
	o, err := parseOptions(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.smsListen != "127.0.0.1:8080" || o.pushListen != "127.0.0.1:8081" || o.acceptRatio != 1 || o.mode != "normal" || o.logLevel != slog.LevelInfo {
		t.Fatalf("defaults = %+v", o)
	}

	o, err = parseOptions([]string{"--latency", "7ms", "--sms-listen", ":9000"}, env(map[string]string{
		"GATEWAY_SIM_LATENCY":        "1s",
		"GATEWAY_SIM_LATENCY_JITTER": "2ms",
		"GATEWAY_SIM_ACCEPT_RATIO":   "0.25",
		"GATEWAY_SIM_REASONS":        "invalid_recipient=1",
		"GATEWAY_SIM_MODE":           "http_503",
		"GATEWAY_SIM_LOG_LEVEL":      "debug",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.latency != 7*time.Millisecond || o.smsListen != ":9000" {
		t.Fatalf("flags must win over the environment: %+v", o)
	}
	if o.jitter != 2*time.Millisecond || o.acceptRatio != 0.25 || o.reasons != "invalid_recipient=1" || o.mode != "http_503" || o.logLevel != slog.LevelDebug {
		t.Fatalf("environment not applied: %+v", o)
	}
	cfg, err := o.simConfig(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RejectRatio != 0.75 || cfg.Mode != gatewaysim.HTTPStatusMode(503) || cfg.Listen[core.GatewaySMS] != ":9000" || cfg.Reasons[0].Reason != "invalid_recipient" {
		t.Fatalf("simulator config = %+v", cfg)
	}
}

func TestOptionsRefuseInvalidValues(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{args: []string{"--latency", "soon"}, want: "latency"},
		{env: map[string]string{"GATEWAY_SIM_LATENCY": "soon"}, want: "GATEWAY_SIM_LATENCY"},
		{args: []string{"--accept-ratio", "1.5"}, want: "accept ratio"},
		{args: []string{"--log-format", "xml"}, want: "log format"},
		{args: []string{"extra"}, want: "unexpected arguments"},
	}
	for _, tc := range cases {
		if _, err := parseOptions(tc.args, env(tc.env), io.Discard); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseOptions(%v, %v) error = %v, want one naming %q", tc.args, tc.env, err, tc.want)
		}
	}
	if _, err := parseOptions([]string{"-h"}, env(nil), io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h gave %v, want flag.ErrHelp", err)
	}
	for _, o := range []options{{reasons: "x"}, {reasons: "x=1", mode: "sleepy"}, {reasons: "x=1", mode: "normal", scriptFile: "/does/not/exist"}} {
		if _, err := o.simConfig(slog.New(slog.DiscardHandler)); err == nil {
			t.Errorf("simConfig(%+v) accepted invalid options", o)
		}
	}
}

func TestRunServesTheScriptFileUntilCanceled(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`{"intent-1": ["invalid_recipient", "accepted"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	simc := make(chan *gatewaysim.Simulator, 1)
	done := make(chan error, 1)
	var logs bytes.Buffer
	go func() {
		done <- run(ctx, []string{"--sms-listen", "127.0.0.1:0", "--push-listen", "127.0.0.1:0"},
			env(map[string]string{"GATEWAY_SIM_SCRIPT": script}), &logs, func(s *gatewaysim.Simulator) { simc <- s })
	}()
	var sim *gatewaysim.Simulator
	select {
	case sim = <-simc:
	case err := <-done:
		t.Fatalf("run ended before serving: %v", err)
	}
	for _, want := range []core.Outcome{
		{Status: core.OutcomeRejected, Reason: core.ReasonInvalidRecipient},
		{Status: core.OutcomeAccepted, MessageID: "sim-push-1"},
	} {
		var got core.Outcome
		if body := submit(t, sim.URL(core.GatewayPush), "intent-1"); json.Unmarshal([]byte(body), &got) != nil || got != want {
			t.Fatalf("answer %s, want %+v", body, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
	if !strings.Contains(logs.String(), "gateway simulator stopped") {
		t.Fatalf("no stop logged:\n%s", logs.String())
	}
}

func TestSignalsStopTheBinaryCleanly(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			// The deadline only keeps a broken binary from hanging the
			// test run; a healthy one stops within milliseconds.
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "--sms-listen", "127.0.0.1:0", "--push-listen", "127.0.0.1:0", "--log-format", "json")
			cmd.Env = append(os.Environ(), asBinary+"=1")
			dieWithParent(cmd)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(stderr)
			urls := map[string]string{}
			for len(urls) < 2 && lines.Scan() {
				var entry struct {
					Msg         string `json:"msg"`
					GatewayType string `json:"gateway_type"`
					URL         string `json:"url"`
				}
				_ = json.Unmarshal(lines.Bytes(), &entry)
				if entry.Msg == "gateway simulator listening" {
					urls[entry.GatewayType] = entry.URL
				}
			}
			if len(urls) < 2 {
				_ = cmd.Process.Kill()
				t.Fatalf("the binary never reported both listeners: %v", urls)
			}
			if got := submit(t, urls["sms"], "signal"); !strings.Contains(got, `"accepted"`) {
				t.Fatalf("the binary answered %s", got)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(stderr)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("exit after %v: %v\n%s", sig, err, rest)
			}
			if !regexp.MustCompile(`"msg":"gateway simulator stopped"`).Match(rest) {
				t.Fatalf("no clean stop logged after %v:\n%s", sig, rest)
			}
		})
	}
}

// submit posts one submission and returns the raw answer body.
func submit(t *testing.T, baseURL, ref string) string {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Post(baseURL+"/v1/submissions", "application/json",
		strings.NewReader(`{"reference":"`+ref+`","payload":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(body))
}

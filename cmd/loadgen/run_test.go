package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
	"github.com/submissionmanager/submission-manager/core"
)

// TestRunAgainstTheRealService drives the generator end to end: the real
// service on a fresh SQLite file and the simulator on loopback. Every intent
// must be stored and executed, and the report must count them all.
func TestRunAgainstTheRealService(t *testing.T) {
	sim, err := gatewaysim.Start(gatewaysim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	dir := t.TempDir()
	registry := filepath.Join(dir, "targets.json")
	reg := fmt.Sprintf(`{"targets": [{"submissionTarget": "sms.realtime", "gatewayType": "sms",
		"gatewayUrl": %q, "mode": "realtime", "policy": "deadline", "maxAcceptanceSeconds": 30,
		"terminalOutcomes": ["invalid_request"]}]}`, sim.URL(core.GatewaySMS))
	if err := os.WriteFile(registry, []byte(reg), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := command.DefaultServeConfig()
	cfg.Registry = registry
	cfg.Database = "sqlite:" + filepath.Join(dir, "load.db")
	cfg.Listen = "127.0.0.1:0"
	cfg.AcquireInterval = 50 * time.Millisecond
	srv, err := command.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(t.Output(), nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})

	// One by one, then in batches of 7 (the last one partial).
	for run, batch := range []string{"1", "7"} {
		var stdout, stderr bytes.Buffer
		code := realMain(t.Context(), []string{"--url", srv.URL(), "--count", "300", "--concurrency", "8",
			"--batch", batch, "--run-id", fmt.Sprintf("loadtest%d", run), "--json", "--wait-timeout", "30s"}, &stdout, &stderr)
		if code != 0 {
			t.Fatalf("loadgen --batch %s exited %d: %s %s", batch, code, stdout.String(), stderr.String())
		}
		var rep report
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatalf("report %s: %v", stdout.String(), err)
		}
		if rep.IntakeErrors != 0 || rep.Unfinished != 0 || rep.Statuses["accepted"] != 300 || rep.Attempts != 300 ||
			rep.IntakePerSecond <= 0 || rep.AttemptsPerSecond <= 0 || rep.IntakeP99Ms < rep.IntakeP50Ms {
			t.Fatalf("--batch %s: report does not add up: %+v", batch, rep)
		}
		if got := sim.Stats().Accepted; got != int64(300*(run+1)) {
			t.Fatalf("--batch %s: the gateway accepted %d submissions, want %d", batch, got, 300*(run+1))
		}
	}
}

package command

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStartNamesTheFlagOfWhatFailed checks start-up failures that no flag
// parser can catch: a registry that does not load and a database that does
// not answer. The operator must learn which flag to fix, and never see the
// database password in the message.
func TestStartNamesTheFlagOfWhatFailed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	example := filepath.Join("..", "..", "..", "config", "submission_targets.json")

	cfg := DefaultServeConfig()
	cfg.Registry = filepath.Join(t.TempDir(), "missing.json")
	cfg.Database = "sqlite:" + filepath.Join(t.TempDir(), "sm.db")
	cfg.Listen = "127.0.0.1:0"
	if _, err := Start(ctx, cfg, log); err == nil || !strings.Contains(err.Error(), "--registry") {
		t.Fatalf("a missing registry: %v", err)
	}

	cfg.Registry = example
	cfg.Database = "sqlserver://sa:s3cret@127.0.0.1:1?database=submissions&dial+timeout=2"
	_, err := Start(ctx, cfg, log)
	if err == nil || !strings.Contains(err.Error(), "--database") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("an unreachable SQL Server: %v", err)
	}

	cfg.Database = "sqlserver://127.0.0.1:1?database=submissions&password=s3cret&dial+timeout=2"
	_, err = Start(ctx, cfg, log)
	if err == nil || !strings.Contains(err.Error(), "--database") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("an unreachable SQL Server, password in the query: %v", err)
	}

	cfg.Database = "sqlite:" + filepath.Join(t.TempDir(), "sm.db")
	cfg.Pprof, cfg.PprofListen = true, "256.0.0.1:80"
	if _, err := Start(ctx, cfg, log); err == nil || !strings.Contains(err.Error(), "--pprof-listen") {
		t.Fatalf("a bad profiling address: %v", err)
	}
	cfg.Pprof = false

	cfg.Listen = "256.0.0.1:80"
	if _, err := Start(ctx, cfg, log); err == nil || !strings.Contains(err.Error(), "--listen") {
		t.Fatalf("a bad listen address: %v", err)
	}
}

// TestStartSetsTheWriteTimeout checks that the API's listener bounds
// writing an answer with --write-timeout, which by default outlasts a
// long poll's 30-second cap.
func TestStartSetsTheWriteTimeout(t *testing.T) {
	cfg := DefaultServeConfig()
	cfg.Registry = filepath.Join("..", "..", "..", "config", "submission_targets.json")
	cfg.Database = "sqlite:" + filepath.Join(t.TempDir(), "sm.db")
	cfg.Listen = "127.0.0.1:0"
	cfg.APIOnly = true
	srv, err := Start(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Shutdown(context.Background()) }()
	if srv.http.WriteTimeout != DefaultWriteTimeout || DefaultWriteTimeout <= 30*time.Second {
		t.Fatalf("WriteTimeout = %s, want the default %s, above the 30 s long-poll cap", srv.http.WriteTimeout, DefaultWriteTimeout)
	}
	if srv.PprofURL() != "" {
		t.Fatalf("a profiling listener is open without --pprof: %s", srv.PprofURL())
	}
}

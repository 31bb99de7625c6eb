package app

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

	cfg.Database = "sqlite:" + filepath.Join(t.TempDir(), "sm.db")
	cfg.Listen = "256.0.0.1:80"
	if _, err := Start(ctx, cfg, log); err == nil || !strings.Contains(err.Error(), "--listen") {
		t.Fatalf("a bad listen address: %v", err)
	}
}

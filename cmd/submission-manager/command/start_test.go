package command

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
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

// TestStartElectsBeforeTheQueryPoolIsWarm checks the order of a start: an
// instance that executes warms the executor's pool, then starts the
// election and waits for its first try at the lease, and only then warms
// the query pool, so that a new leader acquires on a quiet server and
// drains a backlog without waiting for intake's connections; an API-only
// instance warms the query pool only and never elects.
func TestStartElectsBeforeTheQueryPoolIsWarm(t *testing.T) {
	for _, apiOnly := range []bool{false, true} {
		t.Run(map[bool]string{false: "executes", true: "api-only"}[apiOnly], func(t *testing.T) {
			cfg := DefaultServeConfig()
			cfg.Registry = filepath.Join("..", "..", "..", "config", "submission_targets.json")
			cfg.Database = "sqlite:" + filepath.Join(t.TempDir(), "sm.db")
			cfg.Listen = "127.0.0.1:0"
			cfg.APIOnly = apiOnly
			cfg.HolderID = "order-test"
			cfg.AcquireInterval = 20 * time.Millisecond
			var order *startOrder
			open := openServeDatabase
			openServeDatabase = func(ctx context.Context, spec Database, log *slog.Logger) (database, error) {
				db, err := open(ctx, spec, log)
				if err != nil {
					return nil, err
				}
				order = &startOrder{database: db, holderID: cfg.HolderID, awaitLeader: !apiOnly}
				return order, nil
			}
			t.Cleanup(func() { openServeDatabase = open })
			srv, err := Start(t.Context(), cfg, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = srv.Shutdown(context.Background()) }()
			want := []string{"executor warmed", "leading", "queries warmed"}
			if apiOnly {
				want = []string{"queries warmed"}
			}
			if got := order.events(); !slices.Equal(got, want) {
				t.Fatalf("the start ran %q; want %q", got, want)
			}
		})
	}
}

// startOrder is a store whose warm-ups record when they ran. Its query
// warm-up records whether its instance holds the lease at that moment: it
// does only if the start waited for the election's first try.
type startOrder struct {
	database
	holderID    string
	awaitLeader bool

	mu  sync.Mutex
	log []string
}

func (d *startOrder) record(event string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.log = append(d.log, event)
}

func (d *startOrder) events() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.log)
}

func (d *startOrder) WarmExecution(ctx context.Context) error {
	d.record("executor warmed")
	return d.database.WarmExecution(ctx)
}

func (d *startOrder) WarmQueries(ctx context.Context) error {
	if d.awaitLeader {
		lease, found, err := d.Leases().Read(ctx, core.DefaultLeaseName)
		if err == nil && found && lease.HolderID == d.holderID {
			d.record("leading")
		}
	}
	d.record("queries warmed")
	return d.database.WarmQueries(ctx)
}

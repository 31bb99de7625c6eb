package sqlserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// TestExecutorStoreNeverWaitsForTheQueryPool holds every connection of the
// query pool, as WarmQueries does while it warms them and as requests do
// under load, and reads what the executor reads (its rebuild's pages, its
// refresh's changes, a single intent): through ExecutorStore each answers,
// through Store each waits for a connection until its deadline, which
// shows that the query pool was held.
func TestExecutorStoreNeverWaitsForTheQueryPool(t *testing.T) {
	const conns = 2
	db, _ := countedDB(t, Config{MaxOpenConns: conns})
	ctx := context.Background()
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	if _, err := db.Store().CreateIntent(ctx, core.NewIntent("executor-store-1", testContract, json.RawMessage(`{}`), created)); err != nil {
		t.Fatal(err)
	}
	for range conns {
		tx, err := db.queries.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback() })
	}
	reads := []struct {
		name string
		read func(context.Context, ports.Store) error
	}{
		{"LatestChange", func(ctx context.Context, s ports.Store) error {
			_, err := s.LatestChange(ctx)
			return err
		}},
		{"ListPending", func(ctx context.Context, s ports.Store) error {
			rows, err := s.ListPending(ctx, ports.ListPendingParams{Limit: 10})
			if err == nil && len(rows) != 1 {
				t.Errorf("ListPending read %d rows, want 1", len(rows))
			}
			return err
		}},
		{"ListChanged", func(ctx context.Context, s ports.Store) error {
			_, err := s.ListChanged(ctx, ports.ListChangedParams{Limit: 10})
			return err
		}},
		{"GetIntent", func(ctx context.Context, s ports.Store) error {
			_, err := s.GetIntent(ctx, "executor-store-1")
			return err
		}},
	}
	for _, r := range reads {
		readCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := r.read(readCtx, db.ExecutorStore())
		cancel()
		if err != nil {
			t.Errorf("ExecutorStore().%s with the query pool held: %v", r.name, err)
		}
		readCtx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
		err = r.read(readCtx, db.Store())
		cancel()
		if err == nil {
			t.Errorf("Store().%s answered with every query connection held: the test does not hold the pool it means to", r.name)
		}
	}
}

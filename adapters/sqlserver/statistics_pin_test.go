package sqlserver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

// TestStatisticsOfAPinnedTableGatheredAtTheFirstAttempts builds on
// Babelfish the state a warm standby met when it took over a backlog: its
// warm-up's rolled-back attempt gave submission_attempts a page, another
// instance's sp_updatestats (its intents had reached firstStatisticsAt)
// analyzed the table with no live rows, and PostgreSQL planned it as empty
// at any size from then on (statistics.go). The new leader's first
// firstStatisticsLookAt reservations, far fewer rows than
// firstStatisticsAt, must have the statistics gathered again. SQL Server
// gathers its own, and the adapter asks for none there.
func TestStatisticsOfAPinnedTableGatheredAtTheFirstAttempts(t *testing.T) {
	// A new database: one reused from another test keeps the statistics
	// its tables had before they were emptied.
	db := openTestDB(t, freshDatabase(t, databaseOptions{}))
	ctx := context.Background()
	if err := db.Migrate(ctx, "up"); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	if !warmedForStatistics(t, db) {
		return
	}
	const n = 2 * firstStatisticsLookAt
	batch := make([]core.Intent, n)
	for i := range batch {
		batch[i] = newTestIntent(fmt.Sprintf("pinned-%03d", i))
	}
	if _, err := db.Store().CreateIntents(ctx, batch); err != nil {
		t.Fatal(err)
	}
	// Another instance's run.
	if _, err := db.plain.ExecContext(ctx, updateStatisticsSQL); err != nil {
		t.Fatalf("sp_updatestats: %v", err)
	}
	// The statistics, and how many times an ANALYZE not autovacuum's
	// gathered them: autovacuum may come round within the test, and it is
	// the adapter's run that must.
	attempts := func() (reltuples float64, relpages, analyzed int) {
		t.Helper()
		err := db.queries.QueryRowContext(ctx, `SELECT c.reltuples, c.relpages, s.analyze_count
FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_stat_user_tables AS s ON s.relid = c.oid
WHERE c.oid = OBJECT_ID('dbo.submission_attempts')`).Scan(&reltuples, &relpages, &analyzed)
		if err != nil {
			t.Fatalf("read submission_attempts' statistics: %v", err)
		}
		return reltuples, relpages, analyzed
	}
	tuples, pages, before := attempts()
	if tuples != 0 || pages == 0 {
		t.Fatalf("submission_attempts after the warm-up and sp_updatestats: %v rows in %d pages, want 0 rows in some (pinned)", tuples, pages)
	}

	lease := leasetest.MustAcquire(t, db.Leases(), core.DefaultLeaseName, "sm-test", time.Hour)
	starts := make([]ports.StartAttemptParams, firstStatisticsLookAt)
	for i := range starts {
		starts[i] = ports.StartAttemptParams{Fence: lease.Fence(), IntentID: batch[i].IntentID, Number: 1, StartedAt: time.Now()}
	}
	if err := firstError(db.Store().StartAttempts(ctx, starts)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		tuples, pages, analyzed := attempts()
		if analyzed > before && tuples > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after %d reservations, submission_attempts has %v rows in %d pages, analyzed %d times since it was pinned (autovacuum aside)",
				len(starts), tuples, pages, analyzed-before)
		}
	}
}

// TestStatisticsLookBesideATakenQueryPool: the executor's batches wait for
// the attempts' look, so the look must not queue for the query pool, which
// WarmQueries holds whole while it warms it (a fresh leader's batches stood
// still 2 s so, statistics.go). With every connection of the query pool
// taken, the look answers, on the connection the executor's warm-up left
// in its fourth pool.
func TestStatisticsLookBesideATakenQueryPool(t *testing.T) {
	db, _ := migratedDB(t, databaseOptions{})
	ctx := context.Background()
	if !warmedForStatistics(t, db) {
		return
	}
	for range db.cfg.MaxOpenConns {
		conn, err := db.queries.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
	}
	opened := db.exec.Stats().OpenConnections
	lookCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := db.stats.need(lookCtx); err != nil {
		t.Fatalf("the statistics' look with the query pool taken: %v", err)
	}
	if now := db.exec.Stats().OpenConnections; now != opened {
		t.Errorf("the look opened a connection of the executor's fourth pool (%d open, %d after the warm-up)", now, opened)
	}
}

// warmedForStatistics warms db's executor's pools and reports whether the
// adapter gathers statistics on its engine; where the engine gathers its
// own (SQL Server), it checks that the counter is off.
func warmedForStatistics(t *testing.T, db *DB) bool {
	t.Helper()
	if !db.engine.gathersStatistics {
		if !db.stats.off.Load() {
			t.Fatal("the adapter would gather statistics on SQL Server")
		}
		return false
	}
	if err := db.WarmExecution(context.Background()); err != nil {
		t.Fatalf("warm the executor's pool: %v", err)
	}
	return true
}

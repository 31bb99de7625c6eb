package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/sqlservertest"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

// TestExistenceTestsLookUpByKey checks on Babelfish that the batch insert
// looks up the intentIds already stored by key rather than scanning the
// intents, once a kept session has made its generic plan of it (00020's
// header: PostgreSQL turned its NOT EXISTS into an anti join planned from a
// size it saw once, and hashed the whole table for each batch). It counts
// PostgreSQL's sequential scans of the intents and the attempts while one
// session sends ten rounds of a batch insert, reservations and results of
// 100 items, the last five on generic plans, and expects only the one scan
// of each table it asks for at the end, which shows the counters see this
// session's scans. At this size (3,000 of each) the executor's batches
// scan neither table either.
func TestExistenceTestsLookUpByKey(t *testing.T) {
	_, dsn := sqlservertest.Database(t)
	ctx := context.Background()
	open := func() *DB {
		db, err := Open(ctx, Config{DSN: dsn, Logger: testLogger(t), MaxOpenConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		// The statistics' check reads each table (EXISTS): a scan of
		// its own, not the batches'.
		withoutStatistics(db)
		return db
	}
	db := open()
	if err := db.Migrate(ctx, "up"); err != nil {
		t.Fatal(err)
	}
	if !db.Babelfish() {
		db.Close()
		t.Skip("the counters read are PostgreSQL's (pg_stat_user_tables), which SQL Server does not have")
	}
	stats, err := sql.Open("sqlserver", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer stats.Close()

	// Enough rows first (3,000 intents and attempts) that a lookup by key is
	// the plan for one row whatever the statistics say, from another
	// session, whose scans the counters have taken in once it has gone.
	lease := leasetest.MustAcquire(t, db.Leases(), core.DefaultLeaseName, "sm-test", time.Hour)
	for r := range 30 {
		executeRound(t, db.Store(), lease.Fence(), fmt.Sprintf("grow-%02d", r))
	}
	db.Close()
	before := settledScans(t, stats)

	db = open()
	defer db.Close()
	for r := range 10 {
		executeRound(t, db.Store(), lease.Fence(), fmt.Sprintf("kept-%02d", r))
	}
	for _, control := range []string{
		"SELECT COUNT(*) FROM submission_intents WHERE payload IS NOT NULL",
		"SELECT COUNT(*) FROM submission_attempts WHERE error IS NULL",
	} {
		var n int
		if err := db.queries.QueryRowContext(ctx, control).Scan(&n); err != nil {
			t.Fatalf("%s: %v", control, err)
		}
	}
	db.Close()
	after := settledScans(t, stats)
	for i, table := range []string{"submission_intents", "submission_attempts"} {
		if got := after[i] - before[i]; got != 1 {
			t.Errorf("%s: %d sequential scans, want 1 (the control's): the batches scanned it %d times",
				table, got, got-1)
		}
	}
}

// executeRound stores 100 new intents as one batch, reserves their first
// attempts as one batch, and records those attempts' results as one.
func executeRound(t *testing.T, s ports.Store, fence core.Fence, prefix string) {
	t.Helper()
	ctx := context.Background()
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	batch := make([]core.Intent, 100)
	starts := make([]ports.StartAttemptParams, len(batch))
	finishes := make([]ports.FinishAttemptParams, len(batch))
	rejected := core.Outcome{Status: core.OutcomeRejected, Reason: "invalid_recipient"}
	for i := range batch {
		id := fmt.Sprintf("%s-%03d", prefix, i)
		batch[i] = newTestIntent(id)
		starts[i] = ports.StartAttemptParams{Fence: fence, IntentID: id, Number: 1, StartedAt: created.Add(time.Second)}
		finishes[i] = ports.FinishAttemptParams{
			Fence: fence, IntentID: id, Number: 1, FinishedAt: created.Add(2 * time.Second), Sent: true,
			Outcome: &rejected, Decision: core.Decision{Status: core.StatusPending, NextDueAt: created.Add(time.Minute)},
		}
	}
	res, err := s.CreateIntents(ctx, batch)
	if err != nil {
		t.Fatalf("CreateIntents %s: %v", prefix, err)
	}
	for i, r := range res {
		if !r.Created {
			t.Fatalf("CreateIntents %s: item %d not created (refused %v)", prefix, i, r.Refused)
		}
	}
	for i, err := range s.StartAttempts(ctx, starts) {
		if err != nil {
			t.Fatalf("StartAttempts %s: item %d: %v", prefix, i, err)
		}
	}
	for i, err := range s.FinishAttempts(ctx, finishes) {
		if err != nil {
			t.Fatalf("FinishAttempts %s: item %d: %v", prefix, i, err)
		}
	}
}

// settledScans reads PostgreSQL's counts of sequential scans of
// submission_intents and submission_attempts once they stop changing. A
// backend adds its counts to them when it is idle for a while or ends, so
// the caller closes the sessions whose scans it wants counted first.
func settledScans(t *testing.T, stats *sql.DB) [2]int64 {
	t.Helper()
	const q = `SELECT
		(SELECT seq_scan FROM pg_catalog.pg_stat_user_tables WHERE relid = OBJECT_ID('dbo.submission_intents')),
		(SELECT seq_scan FROM pg_catalog.pg_stat_user_tables WHERE relid = OBJECT_ID('dbo.submission_attempts'))`
	var last [2]int64
	stable := 0
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		var now [2]int64
		if err := stats.QueryRow(q).Scan(&now[0], &now[1]); err != nil {
			t.Fatalf("read the scan counters: %v", err)
		}
		if now == last {
			stable++
		} else {
			stable = 0
		}
		if stable == 4 {
			return now
		}
		last = now
	}
	t.Fatalf("the scan counters did not settle: last %v", last)
	return last
}

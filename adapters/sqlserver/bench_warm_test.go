package sqlserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/sqlservertest"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// BenchmarkFirstBatchesAfterWarmUp times a new leader's first reservation
// and result of 50 intents on the connections WarmExecution warmed, against
// its second: each iteration opens the database again (new connections, so
// new backends on Babelfish), warms the executor's lanes as serve does, and
// runs two rounds through ExecutorStore. A warm-up that leaves part of a
// batch unplanned shows as a first round many times the second: the first
// result took 534-594 ms against 8-15 ms for the next while the warm-up's
// batches applied nothing (warmItems).
// `go test -run '^$' -bench FirstBatchesAfterWarmUp -benchtime 5x ./adapters/sqlserver/`.
func BenchmarkFirstBatchesAfterWarmUp(b *testing.B) {
	dsn := migratedBenchDSN(b)
	ctx := context.Background()
	open := func() *DB {
		db := openBenchDB(b, dsn)
		withoutStatistics(db)
		return db
	}
	const size = 50
	var first, next time.Duration
	for i := 0; b.Loop(); i++ {
		db := open()
		if err := db.WarmExecution(ctx); err != nil {
			b.Fatal(err)
		}
		lease, ok, err := db.Leases().Acquire(ctx, ports.AcquireLeaseParams{
			LeaseName: fmt.Sprintf("first-batches-%d", i), HolderID: "bench", Duration: time.Hour})
		if err != nil || !ok {
			b.Fatalf("acquire: %v %v", ok, err)
		}
		for round := range 2 {
			now := time.Now().UTC()
			intents := make([]core.Intent, size)
			starts := make([]ports.StartAttemptParams, size)
			finishes := make([]ports.FinishAttemptParams, size)
			o := core.Outcome{Status: core.OutcomeAccepted, MessageID: "m"}
			for k := range size {
				id := fmt.Sprintf("first-%d-%d-%d", i, round, k)
				intents[k] = core.NewIntent(id, testContract, json.RawMessage(`{"to":"+100"}`), now)
				starts[k] = ports.StartAttemptParams{Fence: lease.Fence(), IntentID: id, Number: 1, StartedAt: now}
				finishes[k] = ports.FinishAttemptParams{Fence: lease.Fence(), IntentID: id, Number: 1, FinishedAt: now,
					Outcome: &o, Sent: true, Decision: core.Decision{Status: core.StatusAccepted, FinalOutcome: &o}}
			}
			if _, err := db.Store().CreateIntents(ctx, intents); err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			if err := firstError(db.ExecutorStore().StartAttempts(ctx, starts)); err != nil {
				b.Fatal(err)
			}
			if err := firstError(db.ExecutorStore().FinishAttempts(ctx, finishes)); err != nil {
				b.Fatal(err)
			}
			if round == 0 {
				first += time.Since(t0)
			} else {
				next += time.Since(t0)
			}
		}
		_ = db.Close()
	}
	b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "first-round-ms")
	b.ReportMetric(float64(next.Milliseconds())/float64(b.N), "second-round-ms")
}

// openBenchDB opens the adapter on dsn as serve does, logging nothing; the
// caller closes it.
func openBenchDB(b *testing.B, dsn string) *DB {
	b.Helper()
	db, err := Open(context.Background(), Config{DSN: dsn, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	return db
}

// migratedBenchDSN is the DSN of a new database with every migration
// applied, for benchmarks that open it again and again (new connections).
func migratedBenchDSN(b *testing.B) string {
	b.Helper()
	_, dsn := sqlservertest.Database(b)
	setup := openBenchDB(b, dsn)
	defer func() { _ = setup.Close() }()
	if err := setup.Migrate(context.Background(), "up"); err != nil {
		b.Fatalf("migrate up: %v", err)
	}
	return dsn
}

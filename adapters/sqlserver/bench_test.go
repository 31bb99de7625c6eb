package sqlserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/sqlservertest"
	"github.com/submissionmanager/submission-manager/core"
)

// BenchmarkCreateIntentParallel submits new intents from 64 goroutines
// through a pool of the default size, as the API does under load, and
// reports the throughput with the round trips and statements each intent
// cost, counted at the driver. `go test -run '^$' -bench CreateIntent
// -benchtime 2000x ./adapters/sqlserver/` with SUBMISSION_TEST_SQLSERVER_DSN set.
func BenchmarkCreateIntentParallel(b *testing.B) {
	benchCreate(b, func(i int64) string { return fmt.Sprintf("bench-%d", i) })
}

// BenchmarkCreateIntentRepeatParallel submits repeats of stored intents:
// the idempotent path, which writes nothing.
func BenchmarkCreateIntentRepeatParallel(b *testing.B) {
	benchCreate(b, func(i int64) string { return fmt.Sprintf("repeat-%d", i%64) })
}

func benchCreate(b *testing.B, idOf func(int64) string) {
	db, rc := countedBenchDB(b)
	s := db.Store()
	ctx := context.Background()
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	// Store the repeats' intents from 64 goroutines at once, which also
	// opens every connection of the pool before the clock starts.
	var warm sync.WaitGroup
	for i := range int64(64) {
		warm.Go(func() {
			in := core.NewIntent(fmt.Sprintf("repeat-%d", i), testContract, json.RawMessage(`{"to":"+100"}`), created)
			if _, err := s.CreateIntent(ctx, in); err != nil {
				b.Error(err)
			}
		})
	}
	warm.Wait()
	before := rc.snapshot(poolQueries)
	var next atomic.Int64
	b.SetParallelism(64 / max(1, runtime.GOMAXPROCS(0))) // 64 goroutines in all
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := idOf(next.Add(1))
			if _, err := s.CreateIntent(ctx, core.NewIntent(id, testContract, json.RawMessage(`{"to":"+100"}`), created)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	got := rc.since(poolQueries, before)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "intents/s")
	b.ReportMetric(float64(got.RoundTrips())/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(statementsIn(b, got.Queries))/float64(b.N), "statements/op")
	b.ReportMetric(float64(got.Logins), "logins")
}

// countedBenchDB opens a new migrated database through the request
// counter, for a benchmark.
func countedBenchDB(b *testing.B) (*DB, *requestCounter) {
	b.Helper()
	_, dsn := sqlservertest.Database(b)
	rc := newRequestCounter()
	db, err := Open(context.Background(), Config{DSN: dsn, Logger: slog.New(slog.DiscardHandler), wrapConnector: rc.wrap})
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	b.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(context.Background(), "up"); err != nil {
		b.Fatalf("migrate up: %v", err)
	}
	return db, rc
}

package sqlserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/sqlservertest"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
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
	parallel64(b, rc, "intents/s", func(i int64) error {
		_, err := s.CreateIntent(ctx, core.NewIntent(idOf(i), testContract, json.RawMessage(`{"to":"+100"}`), created))
		return err
	})
}

// parallel64 runs op b.N times from 64 goroutines, op's argument counting
// from 1, and reports the operations per second (as unit) with the round
// trips and statements each cost, counted at the driver.
func parallel64(b *testing.B, rc *requestCounter, unit string, op func(i int64) error) {
	before := rc.snapshot(poolQueries)
	var next atomic.Int64
	b.SetParallelism(64 / max(1, runtime.GOMAXPROCS(0))) // 64 goroutines in all
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := op(next.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	got := rc.since(poolQueries, before)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), unit)
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

// batchPayloads are a compacted JSON payload of printable ASCII, which a
// batch carries inside its JSON (one call of dbo.submission_insert_intents),
// and one with non-ASCII text, which sends its batch as the text statement
// that binds each payload (insert_request.go).
var batchPayloads = []struct {
	name    string
	payload json.RawMessage
}{
	{"ascii", json.RawMessage(`{"to":"+15550100","text":"Your code is 123456. \"Quoted\""}`)},
	{"non-ascii", json.RawMessage(`{"to":"+15550100","text":"Your code is 123456. \"Quoted\", é 👋"}`)},
}

// BenchmarkCreateIntentsBatch stores new intents in batches of 500 from 8
// goroutines, as the API's batch endpoint does under bulk load, and
// reports the throughput and the round trips per batch (benchBatches says
// what else). `go test -run '^$' -bench CreateIntentsBatch -benchtime 40x
// ./adapters/sqlserver/`.
func BenchmarkCreateIntentsBatch(b *testing.B) {
	for _, p := range batchPayloads {
		b.Run(p.name, func(b *testing.B) { benchBatches(b, 8, 500, p.payload) })
	}
}

// BenchmarkCreateIntentsBatch16x100 stores batches of 100 from 16
// goroutines, the shape of make bench-sqlserver's bulk phase. `go test
// -run '^$' -bench CreateIntentsBatch16x100 -benchtime 300x
// ./adapters/sqlserver/`.
func BenchmarkCreateIntentsBatch16x100(b *testing.B) {
	for _, p := range batchPayloads {
		b.Run(p.name, func(b *testing.B) { benchBatches(b, 16, 100, p.payload) })
	}
}

// benchBatches stores b.N batches of size new intents with payload from
// writers goroutines on a warm pool, and reports the throughput, the round
// trips per batch, and each batch's median and 99th percentile latency.
// Before the clock starts, 64 single submissions open the pool's
// connections (as the bulk phase's warm-up does), and then every
// connection runs a batch insert at once: the first on a connection costs
// Babelfish a compilation of the request (about a second of CPU, whether
// procedure or text statement), which would otherwise land on the first
// timed batches; the slowest of those is reported as cold-max-ms.
func benchBatches(b *testing.B, writers, size int, payload json.RawMessage) {
	db, rc := countedBenchDB(b)
	s := db.Store()
	ctx := context.Background()
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	var next atomic.Int64
	batch := func() []core.Intent {
		out := make([]core.Intent, size)
		for i := range out {
			out[i] = core.NewIntent(fmt.Sprintf("bulk-%d", next.Add(1)), testContract, payload, created)
		}
		return out
	}
	var warm sync.WaitGroup
	for i := range 64 {
		warm.Go(func() {
			if _, err := s.CreateIntent(ctx, core.NewIntent(fmt.Sprintf("warm-%d", i), testContract, payload, created)); err != nil {
				b.Error(err)
			}
		})
	}
	warm.Wait()
	var (
		mu   sync.Mutex
		took []time.Duration
	)
	// timed runs n batches from g goroutines, recording each one's latency.
	timed := func(g int, n int64) {
		var done atomic.Int64
		var wg sync.WaitGroup
		for range g {
			wg.Go(func() {
				for done.Add(1) <= n {
					in := batch()
					t0 := time.Now()
					if _, err := s.CreateIntents(ctx, in); err != nil {
						b.Error(err)
						return
					}
					d := time.Since(t0)
					mu.Lock()
					took = append(took, d)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	conns := db.cfg.MaxOpenConns
	timed(conns, int64(conns))
	cold := slices.Max(took)
	took = took[:0]
	before := rc.snapshot(poolQueries)
	b.ResetTimer()
	start := time.Now()
	timed(writers, int64(b.N))
	elapsed := time.Since(start)
	b.StopTimer()
	got := rc.since(poolQueries, before)
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(float64(b.N*size)/elapsed.Seconds(), "intents/s")
	b.ReportMetric(float64(got.RoundTrips())/float64(b.N), "roundtrips/batch")
	b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
	b.ReportMetric(ms(took[len(took)*99/100]), "p99-ms")
	b.ReportMetric(ms(cold), "cold-max-ms")
}

// BenchmarkAttemptBatches runs the executor's fenced writes as it does
// under a backlog: 4 writers, each reserving a batch of 64 attempts and
// then recording their results (each intent stays pending, due again), and
// reports attempts per second. `go test -run '^$' -bench AttemptBatches
// -benchtime 100x ./adapters/sqlserver/`.
func BenchmarkAttemptBatches(b *testing.B) {
	const writers, size = 4, 64
	db, rc := countedBenchDB(b)
	s := db.Store()
	ctx := context.Background()
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	lease, acquired, err := db.Leases().Acquire(ctx, ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "sm-bench", Duration: time.Hour})
	if err != nil || !acquired {
		b.Fatalf("acquire: %v %v", acquired, err)
	}
	// Each writer owns its intents; attempt numbers grow per round.
	ids := make([][]string, writers)
	for w := range ids {
		var batch []core.Intent
		for i := range size {
			id := fmt.Sprintf("w%d-%03d", w, i)
			ids[w] = append(ids[w], id)
			batch = append(batch, core.NewIntent(id, testContract, json.RawMessage(`{"to":"+100"}`), created))
		}
		if _, err := s.CreateIntents(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	round := func(w, n int) error {
		at := created.Add(time.Duration(n) * time.Second)
		starts := make([]ports.StartAttemptParams, size)
		finishes := make([]ports.FinishAttemptParams, size)
		for i, id := range ids[w] {
			starts[i] = ports.StartAttemptParams{Fence: lease.Fence(), IntentID: id, Number: n, StartedAt: at}
			o := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonProviderFailure}
			finishes[i] = ports.FinishAttemptParams{Fence: lease.Fence(), IntentID: id, Number: n, FinishedAt: at, Outcome: &o,
				Sent: true, Decision: core.Decision{Status: core.StatusPending, NextDueAt: at.Add(time.Second)}}
		}
		if err := firstError(s.StartAttempts(ctx, starts)); err != nil {
			return err
		}
		return firstError(s.FinishAttempts(ctx, finishes))
	}
	for w := range writers { // opens the connections
		if err := round(w, 1); err != nil {
			b.Fatal(err)
		}
	}
	before := rc.snapshot(poolQueries)
	rounds := make([]int, writers)
	for w := range rounds {
		rounds[w] = 1
	}
	var next atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				rounds[w]++
				if err := round(w, rounds[w]); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	got := rc.since(poolQueries, before)
	b.ReportMetric(float64(b.N*size)/elapsed.Seconds(), "attempts/s")
	b.ReportMetric(float64(got.RoundTrips())/float64(b.N), "roundtrips/round")
}

package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// benchClients is the concurrency of the product target: 64 clients.
const benchClients = 64

// The benchmarks run on a real database file in b.TempDir() with the
// production settings (synchronous=FULL) and report throughput and the p99
// latency of one operation as seen by its caller:
//
//	go test -run '^$' -bench . -benchtime 20000x ./adapters/sqlite/

func BenchmarkCreateIntentParallel(b *testing.B) {
	db := openBenchDB(b)
	store := db.Store()
	var next atomic.Int64
	lat := newLatencies()
	runParallel(b, lat, func() error {
		id := fmt.Sprintf("intent-%09d", next.Add(1))
		_, err := store.CreateIntent(context.Background(),
			core.NewIntent(id, testContract(), []byte(`{"to":"+4915112345678","text":"hello"}`), time.Now()))
		return err
	})
	lat.report(b, "intents/s")
}

func BenchmarkCreateIntentRepeatParallel(b *testing.B) {
	db := openBenchDB(b)
	store := db.Store()
	in := core.NewIntent("intent-repeated", testContract(), []byte(`{"to":"+4915112345678"}`), time.Now())
	if _, err := store.CreateIntent(context.Background(), in); err != nil {
		b.Fatal(err)
	}
	lat := newLatencies()
	runParallel(b, lat, func() error {
		_, err := store.CreateIntent(context.Background(), in)
		return err
	})
	lat.report(b, "repeats/s")
}

// BenchmarkAttemptParallel measures one attempt's store work: StartAttempt
// and then FinishAttempt, under the lease fence, on distinct intents.
func BenchmarkAttemptParallel(b *testing.B) {
	db := openBenchDB(b)
	store := db.Store()
	fillPending(b, db, b.N)
	f := benchFence(b, db)
	var next atomic.Int64
	lat := newLatencies()
	outcome := core.Outcome{Status: core.OutcomeAccepted, MessageID: "m"}
	runParallel(b, lat, func() error {
		id := fmt.Sprintf("intent-%09d", next.Add(1)-1)
		now := time.Now()
		if err := store.StartAttempt(context.Background(), ports.StartAttemptParams{
			Fence: f, IntentID: id, Number: 1, StartedAt: now,
		}); err != nil {
			return err
		}
		return store.FinishAttempt(context.Background(), ports.FinishAttemptParams{
			Fence: f, IntentID: id, Number: 1, FinishedAt: time.Now(), Outcome: &outcome, Sent: true,
			Decision: core.Decision{Status: core.StatusAccepted, FinalOutcome: &outcome},
		})
	})
	lat.report(b, "attempts/s")
}

func BenchmarkGetIntentParallel(b *testing.B) {
	db := openBenchDB(b)
	store := db.Store()
	const n = 10_000
	fillPending(b, db, n)
	var next atomic.Int64
	lat := newLatencies()
	runParallel(b, lat, func() error {
		_, err := store.GetIntent(context.Background(), fmt.Sprintf("intent-%09d", next.Add(1)%n))
		return err
	})
	lat.report(b, "reads/s")
}

// BenchmarkGetIntents256 measures the leader's read ahead: 256 intents with
// their attempts in one GetIntents; compare intents/s with
// BenchmarkGetIntentParallel's reads/s.
func BenchmarkGetIntents256(b *testing.B) {
	db := openBenchDB(b)
	store := db.Store()
	const n, batch = 10_000, 256
	fillPending(b, db, n)
	ids := make([]string, batch)
	b.ResetTimer()
	for i := range b.N {
		for j := range ids {
			ids[j] = fmt.Sprintf("intent-%09d", (i*batch+j)%n)
		}
		got, err := store.GetIntents(context.Background(), ids)
		if err != nil || len(got) != batch {
			b.Fatalf("GetIntents: %d intents, %v", len(got), err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "intents/s")
}

func openBenchDB(b *testing.B) *DB {
	b.Helper()
	return openAt(b, filepath.Join(b.TempDir(), "bench.db"))
}

// fillPending inserts n pending intents intent-000000000 and up in one
// transaction, straight in SQL, so the fill is no part of the measurement.
func fillPending(b *testing.B, db *DB, n int) {
	b.Helper()
	const contract = `{"submissionTarget":"alerts","gatewayType":"sms","gatewayUrl":"http://x","mode":"realtime","policy":"one_shot","terminalOutcomes":[]}`
	_, err := db.writeDB.ExecContext(context.Background(), `
		WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < ?)
		INSERT INTO submission_intents (intent_id, submission_target, payload, contract, gateway_type, mode,
			status, created_at, next_due_at, attempt_count, last_modified_at)
		SELECT printf('intent-%09d', n), 'alerts', CAST('{}' AS BLOB), ?, 'sms', 'realtime', 'pending',
			1700000000000000000 + n, 1700000000000000000 + n, 0, 1700000000000000000 + n
		FROM seq`, n, contract)
	if err != nil {
		b.Fatalf("fill: %v", err)
	}
}

// benchFence takes the executor's lease for the benchmark and returns its
// fence.
func benchFence(b *testing.B, db *DB) core.Fence {
	b.Helper()
	lease, ok, err := db.Leases().Acquire(context.Background(), ports.AcquireLeaseParams{
		LeaseName: core.DefaultLeaseName, HolderID: "bench", Duration: time.Hour,
	})
	if err != nil || !ok {
		b.Fatalf("acquire: ok=%v err=%v", ok, err)
	}
	return lease.Fence()
}

// runParallel runs op b.N times from benchClients goroutines and records
// each call's latency.
func runParallel(b *testing.B, lat *latencies, op func() error) {
	b.Helper()
	b.SetParallelism((benchClients + 1) / max(1, testingProcs()))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			t0 := time.Now()
			if err := op(); err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(t0))
		}
		lat.add(mine)
	})
	lat.elapsed = time.Since(start)
	b.StopTimer()
}

type latencies struct {
	mu      sync.Mutex
	all     []time.Duration
	elapsed time.Duration
}

func newLatencies() *latencies { return &latencies{} }

func (l *latencies) add(d []time.Duration) {
	l.mu.Lock()
	l.all = append(l.all, d...)
	l.mu.Unlock()
}

func (l *latencies) report(b *testing.B, unit string) {
	if len(l.all) == 0 || l.elapsed <= 0 {
		return
	}
	slices.Sort(l.all)
	p := func(q float64) float64 {
		return float64(l.all[int(q*float64(len(l.all)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(len(l.all))/l.elapsed.Seconds(), unit)
	b.ReportMetric(p(0.50), "p50-ms")
	b.ReportMetric(p(0.99), "p99-ms")
}

func testingProcs() int { return runtime.GOMAXPROCS(0) }

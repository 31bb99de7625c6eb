package sqlserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// BenchmarkIntakeBatchesCPU stores new intents in batches of 100 from 16
// goroutines (make bench-sqlserver's bulk shape) on a database of 20,000
// intents that have each made an attempt, and reports the database
// server's CPU per intent (db-cpu-ms/intent) beside the rate, as
// BenchmarkExecutorRounds does for attempts; SUBMISSION_BENCH_PAIRS
// alternates the latest migration with the one before it there too.
// `go test -run '^$' -bench IntakeBatchesCPU -benchtime 100x ./adapters/sqlserver/`.
func BenchmarkIntakeBatchesCPU(b *testing.B) {
	const writers, size = 16, 100
	db, _ := countedBenchDB(b)
	s := db.Store()
	ctx := context.Background()
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	lease, acquired, err := db.Leases().Acquire(ctx, ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "sm-bench", Duration: time.Hour})
	if err != nil || !acquired {
		b.Fatalf("acquire: %v %v", acquired, err)
	}
	seedBacklog(b, s, lease.Fence(), 4, 20000, created)
	payload := json.RawMessage(`{"to":"+15550100","text":"Your code is 123456."}`)
	var next atomic.Int64
	batch := func() []core.Intent {
		out := make([]core.Intent, size)
		for i := range out {
			out[i] = core.NewIntent(fmt.Sprintf("new-%d", next.Add(1)), testContract, payload, created)
		}
		return out
	}
	// timed stores n batches from the writers.
	timed := func(b *testing.B, n int64) {
		var done atomic.Int64
		var wg sync.WaitGroup
		for range writers {
			wg.Go(func() {
				for done.Add(1) <= n {
					if _, err := s.CreateIntents(ctx, batch()); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	run := func(b *testing.B) {
		timed(b, writers) // opens the connections and plans the procedure
		cpu0, _, measured := backendCPU(tdsPort(b))
		b.ResetTimer()
		start := time.Now()
		timed(b, int64(b.N))
		elapsed := time.Since(start)
		b.StopTimer()
		cpu1, _, _ := backendCPU(tdsPort(b))
		intents := float64(b.N * size)
		b.ReportMetric(intents/elapsed.Seconds(), "intents/s")
		if measured {
			b.ReportMetric((cpu1-cpu0)*1000/intents, "db-cpu-ms/intent")
		}
	}
	alternate(b, db, run)
}

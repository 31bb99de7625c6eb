package sqlserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// BenchmarkExecutorRounds runs the leader's requests per executed attempt
// as a backlog runs them, on a database of 20,000 intents that have each
// made one attempt: 4 writers, each
// round a prefetch (GetIntents) of 16 of its intents, their reservations
// (StartAttempts) and their results (FinishAttempts, each intent pending
// and due again). Besides attempts/s it reports the database server's CPU
// per attempt (db-cpu-ms/attempt) where the server runs here as
// PostgreSQL's backends (Babelfish): the cost that caps the executor
// there, and a steadier figure than the rate on a shared machine.
//
// SUBMISSION_BENCH_BATCH=n sets the batch size (16 by default; one that
// divides 5,000), since a call's fixed cost weighs most in small batches.
// SUBMISSION_BENCH_PAIRS=n runs n pairs of sub-benchmarks, "latest" with
// every migration applied and "previous" with the latest one rolled back,
// alternated on the same database, so that a migration that changes
// procedures is compared with the one it replaces under the same load;
// SUBMISSION_BENCH_RUNS=n runs it n times on one database (alternate).
// SUBMISSION_BENCH_WRITERS=n (1 to 4) sets the writers.
// `go test -run '^$' -bench ExecutorRounds -benchtime 40x ./adapters/sqlserver/`.
func BenchmarkExecutorRounds(b *testing.B) {
	const intents = 20000
	writers := 4
	if n, err := strconv.Atoi(os.Getenv("SUBMISSION_BENCH_WRITERS")); err == nil && n > 0 && n <= 4 {
		writers = n
	}
	size := 16
	if n, err := strconv.Atoi(os.Getenv("SUBMISSION_BENCH_BATCH")); err == nil && n > 0 && intents/writers%n == 0 {
		size = n
	}
	db, rc := countedBenchDB(b)
	s := db.Store()
	ctx := context.Background()
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	lease, acquired, err := db.Leases().Acquire(ctx, ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "sm-bench", Duration: time.Hour})
	if err != nil || !acquired {
		b.Fatalf("acquire: %v %v", acquired, err)
	}
	ids := seedBacklog(b, s, lease.Fence(), writers, intents, created)
	next := make([]int, writers) // each writer's next chunk of its intents
	round := func(w int) error {
		from := next[w] % (len(ids[w]) / size) * size
		next[w]++
		chunk := ids[w][from : from+size]
		got, err := s.GetIntents(ctx, chunk)
		if err != nil {
			return err
		}
		if len(got) != size {
			return fmt.Errorf("GetIntents: %d intents, want %d", len(got), size)
		}
		at := created.Add(time.Duration(next[w]) * time.Millisecond)
		starts := make([]ports.StartAttemptParams, size)
		finishes := make([]ports.FinishAttemptParams, size)
		for i, in := range got {
			n := in.AttemptCount + 1
			starts[i] = ports.StartAttemptParams{Fence: lease.Fence(), IntentID: in.IntentID, Number: n, StartedAt: at}
			o := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonProviderFailure}
			finishes[i] = ports.FinishAttemptParams{Fence: lease.Fence(), IntentID: in.IntentID, Number: n, FinishedAt: at, Outcome: &o,
				Sent: true, Decision: core.Decision{Status: core.StatusPending, NextDueAt: at.Add(time.Second)}}
		}
		if err := firstError(s.StartAttempts(ctx, starts)); err != nil {
			return err
		}
		return firstError(s.FinishAttempts(ctx, finishes))
	}
	run := func(b *testing.B) {
		var warm sync.WaitGroup
		for w := range writers { // opens the connections and plans the procedures
			warm.Go(func() {
				if err := round(w); err != nil {
					b.Error(err)
				}
			})
		}
		warm.Wait()
		before := rc.snapshot(poolQueries)
		cpu0, _, measured := backendCPU(tdsPort(b))
		var done atomic.Int64
		b.ResetTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for done.Add(1) <= int64(b.N) {
					if err := round(w); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		b.StopTimer()
		cpu1, backends, _ := backendCPU(tdsPort(b))
		got := rc.since(poolQueries, before)
		attempts := float64(b.N * size)
		b.ReportMetric(attempts/elapsed.Seconds(), "attempts/s")
		b.ReportMetric(float64(got.RoundTrips())/float64(b.N), "roundtrips/round")
		if measured {
			b.ReportMetric((cpu1-cpu0)*1000/attempts, "db-cpu-ms/attempt")
			b.ReportMetric(float64(backends), "backends")
		}
	}
	alternate(b, db, run)
}

// alternate runs run once, or with SUBMISSION_BENCH_PAIRS=n as n pairs of
// sub-benchmarks on db: "latest" with every migration applied, then
// "previous" with the latest one rolled back. SUBMISSION_BENCH_RUNS=n
// (without pairs) runs it n times on db, "run-1" to "run-n": two builds
// that cannot share a process (a change of the adapter's code, not only of
// a procedure) are compared by their later runs, which find their
// connections and plans warm, as the first does not.
func alternate(b *testing.B, db *DB, run func(*testing.B)) {
	pairs, _ := strconv.Atoi(os.Getenv("SUBMISSION_BENCH_PAIRS"))
	if pairs < 1 {
		runs, _ := strconv.Atoi(os.Getenv("SUBMISSION_BENCH_RUNS"))
		if runs < 2 {
			run(b)
			return
		}
		for i := range runs {
			b.Run(fmt.Sprintf("run-%d", i+1), run)
		}
		return
	}
	ctx := context.Background()
	for i := range pairs {
		b.Run(fmt.Sprintf("latest-%d", i+1), run)
		if err := db.Migrate(ctx, "down"); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("previous-%d", i+1), run)
		if err := db.Migrate(ctx, "up"); err != nil {
			b.Fatal(err)
		}
	}
}

// seedBacklog stores intents intents, spread over writers lists of
// intentIds, each with one attempt made, as after a backlog's first pass:
// reads of attempts then meet a table of the backlog's size.
func seedBacklog(b *testing.B, s ports.Store, fence core.Fence, writers, intents int, created time.Time) [][]string {
	ctx := context.Background()
	ids := make([][]string, writers)
	for w := range writers {
		for i := range intents / writers {
			ids[w] = append(ids[w], fmt.Sprintf("w%d-%05d", w, i))
		}
		for chunk := range slices.Chunk(ids[w], 500) {
			batch := make([]core.Intent, len(chunk))
			starts := make([]ports.StartAttemptParams, len(chunk))
			finishes := make([]ports.FinishAttemptParams, len(chunk))
			for i, id := range chunk {
				batch[i] = core.NewIntent(id, testContract, json.RawMessage(`{"to":"+100"}`), created)
				starts[i] = ports.StartAttemptParams{Fence: fence, IntentID: id, Number: 1, StartedAt: created}
				o := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonProviderFailure}
				finishes[i] = ports.FinishAttemptParams{Fence: fence, IntentID: id, Number: 1, FinishedAt: created, Outcome: &o,
					Sent: true, Decision: core.Decision{Status: core.StatusPending, NextDueAt: created}}
			}
			if _, err := s.CreateIntents(ctx, batch); err != nil {
				b.Fatal(err)
			}
			if err := firstError(s.StartAttempts(ctx, starts)); err != nil {
				b.Fatal(err)
			}
			if err := firstError(s.FinishAttempts(ctx, finishes)); err != nil {
				b.Fatal(err)
			}
		}
	}
	return ids
}

// tdsPort is the server's port in the test DSN (1433 by default).
func tdsPort(b testing.TB) int {
	u, err := url.Parse(os.Getenv("SUBMISSION_TEST_SQLSERVER_DSN"))
	if err != nil {
		b.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return 1433
	}
	return port
}

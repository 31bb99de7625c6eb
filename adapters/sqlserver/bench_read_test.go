package sqlserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// readBenchIntents stores n pending intents, each with one finished
// attempt (so a read's second result set carries rows, as it does for an
// intent being retried), and returns their intentIds.
func readBenchIntents(b *testing.B, db *DB, n int) []string {
	b.Helper()
	s := db.Store()
	ctx := context.Background()
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	lease, acquired, err := db.Leases().Acquire(ctx, ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "sm-bench", Duration: time.Hour})
	if err != nil || !acquired {
		b.Fatalf("acquire: %v %v", acquired, err)
	}
	ids := make([]string, n)
	intents := make([]core.Intent, n)
	starts := make([]ports.StartAttemptParams, n)
	finishes := make([]ports.FinishAttemptParams, n)
	at := created.Add(time.Second)
	for i := range n {
		ids[i] = fmt.Sprintf("read-%04d", i)
		intents[i] = core.NewIntent(ids[i], testContract, json.RawMessage(`{"to":"+100"}`), created)
		starts[i] = ports.StartAttemptParams{Fence: lease.Fence(), IntentID: ids[i], Number: 1, StartedAt: at}
		o := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonProviderFailure}
		finishes[i] = ports.FinishAttemptParams{Fence: lease.Fence(), IntentID: ids[i], Number: 1, FinishedAt: at, Outcome: &o,
			Sent: true, Decision: core.Decision{Status: core.StatusPending, NextDueAt: at.Add(time.Minute)}}
	}
	if _, err := s.CreateIntents(ctx, intents); err != nil {
		b.Fatal(err)
	}
	if err := firstError(s.StartAttempts(ctx, starts)); err != nil {
		b.Fatal(err)
	}
	if err := firstError(s.FinishAttempts(ctx, finishes)); err != nil {
		b.Fatal(err)
	}
	return ids
}

// BenchmarkGetIntentParallel reads stored intents from 64 goroutines, as
// long polls (GET with Prefer: wait) and status checks do under load, and
// reports reads per second with the round trips and statements each cost.
// `go test -run '^$' -bench GetIntentParallel -benchtime 3s
// ./adapters/sqlserver/` with SUBMISSION_TEST_SQLSERVER_DSN set.
func BenchmarkGetIntentParallel(b *testing.B) {
	db, rc := countedBenchDB(b)
	ids := readBenchIntents(b, db, 64)
	s := db.Store()
	ctx := context.Background()
	read := func(i int64) error {
		in, err := s.GetIntent(ctx, ids[i%int64(len(ids))])
		if err == nil && len(in.Attempts) != 1 {
			err = fmt.Errorf("intent %s read with %d attempts, want 1", in.IntentID, len(in.Attempts))
		}
		return err
	}
	// Every intent once from 64 goroutines at once, which opens every
	// connection of the pool before the clock starts.
	var warm sync.WaitGroup
	for i := range int64(len(ids)) {
		warm.Go(func() {
			if err := read(i); err != nil {
				b.Error(err)
			}
		})
	}
	warm.Wait()
	parallel64(b, rc, "reads/s", read)
}

// BenchmarkGetIntents reads the executor's prefetch of 256 due intents
// (app/executor's prefetchSize at the default in-flight limit), one
// GetIntents at a time, and reports intents read per second.
func BenchmarkGetIntents(b *testing.B) {
	const size = 256
	db, rc := countedBenchDB(b)
	ids := readBenchIntents(b, db, size)
	s := db.Store()
	ctx := context.Background()
	read := func() error {
		got, err := s.GetIntents(ctx, ids)
		if err == nil && len(got) != size {
			err = fmt.Errorf("read %d of %d intents", len(got), size)
		}
		return err
	}
	if err := read(); err != nil {
		b.Fatal(err)
	}
	before := rc.snapshot(poolQueries)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if err := read(); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	got := rc.since(poolQueries, before)
	b.ReportMetric(float64(b.N*size)/elapsed.Seconds(), "intents/s")
	b.ReportMetric(float64(got.RoundTrips())/float64(b.N), "roundtrips/op")
}

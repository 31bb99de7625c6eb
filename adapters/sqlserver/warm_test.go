package sqlserver

import (
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// TestWarmOpensThePoolsAndStoresNothing: the warm-ups log in every idle
// connection of the query pool, one of each of the executor's lanes (the
// query pool's none of the executor's), one lease connection and the
// pin's session, store no intent and no lease, and leave a follower's
// warm-ups a period away; a first acquire after them logs in nowhere, and
// intake under load logs in no more and runs the intake's procedure on
// the connections warmed.
func TestWarmOpensThePoolsAndStoresNothing(t *testing.T) {
	const idle = 4
	db, rc := countedDB(t, Config{MaxOpenConns: idle})
	ctx := t.Context()
	if err := db.WarmQueries(ctx); err != nil {
		t.Fatalf("WarmQueries: %v", err)
	}
	if got := rc.snapshot(poolExecutor).Logins; got != 0 {
		t.Errorf("WarmQueries logged in %d connections of the executor's pool; want none", got)
	}
	if err := db.WarmExecution(ctx); err != nil {
		t.Fatalf("WarmExecution: %v", err)
	}
	queries, exec := rc.snapshot(poolQueries), rc.snapshot(poolExecutor)
	if queries.Logins != idle {
		t.Errorf("WarmQueries logged in %d connections of the query pool; want its %d idle ones", queries.Logins, idle)
	}
	warmCalls := 0
	for _, q := range queries.Queries {
		if q == createIntentSQL {
			warmCalls++
		}
	}
	if warmCalls != idle || queries.Requests[kindRollback] != idle || queries.Requests[kindCommit] != 0 {
		t.Errorf("WarmQueries sent %d intake calls, %d rollbacks and %d commits on the query pool; want %d, %d and 0",
			warmCalls, queries.Requests[kindRollback], queries.Requests[kindCommit], idle, idle)
	}
	if exec.Logins != int(laneCount)+1 {
		t.Errorf("WarmExecution logged in %d connections of the executor's pools; want %d, one per lane and one of the fourth pool", exec.Logins, laneCount+1)
	}
	if db.warmth.due(db.warmEvery()) {
		t.Error("after WarmExecution, a follower's warm-up of the executor's pool was due at once")
	}
	if db.rehearsed.due(db.warmEvery()) {
		t.Error("after WarmExecution, a follower's rehearsal of the takeover was due at once")
	}
	leases, pin := rc.snapshot(poolLeases), rc.snapshot(poolLeasePin)
	if leases.Logins != 1 || pin.Logins != 1 {
		t.Errorf("WarmExecution logged in %d lease connections and %d pin sessions; want one of each", leases.Logins, pin.Logins)
	}
	if leases.Requests[kindCommit] != 0 {
		t.Errorf("WarmExecution committed %d transactions on the lease pool; want none", leases.Requests[kindCommit])
	}
	// The first acquire of a new database runs on the warmed connections.
	if _, ok, err := db.Leases().Acquire(ctx, ports.AcquireLeaseParams{LeaseName: "warm-first", HolderID: "warm", Duration: time.Minute}); err != nil || !ok {
		t.Fatalf("Acquire after the warm-up: %v %v", ok, err)
	}
	if l, p := rc.since(poolLeases, leases), rc.since(poolLeasePin, pin); l.Logins != 0 || p.Logins != 0 {
		t.Errorf("the first acquire after the warm-up logged in %d lease connections and %d pin sessions; want none", l.Logins, p.Logins)
	}
	var leaseRows int
	if err := db.queries.QueryRowContext(ctx, `SELECT COUNT(*) FROM submission_manager_leases WHERE lease_name <> 'warm-first'`).Scan(&leaseRows); err != nil {
		t.Fatal(err)
	}
	if leaseRows != 0 {
		t.Errorf("the warm-ups left %d lease rows stored", leaseRows)
	}
	if stored := countIntents(t, db); stored != 0 {
		t.Fatalf("the warm-ups left %d intents stored", stored)
	}

	// As many creates at once as the pool holds: none logs in.
	s := db.Store()
	var wg sync.WaitGroup
	errs := make(chan error, idle)
	for i := range idle {
		wg.Go(func() {
			intent := core.NewIntent("warm-load-"+string(rune('a'+i)), testContract, []byte(`{"to":"+100"}`), time.Now().UTC())
			_, err := s.CreateIntent(ctx, intent)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := rc.since(poolQueries, queries); got.Logins != 0 {
		t.Errorf("%d creates at once after the warm-ups logged in %d more connections", idle, got.Logins)
	}
}

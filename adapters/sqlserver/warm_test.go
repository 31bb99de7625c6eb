package sqlserver

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// TestWarmOpensThePoolsAndStoresNothing: the warm-ups log in every idle
// connection of the query pool and warmConns of the executor's (the query
// pool's none of the executor's), store no intent, and leave a follower's
// warm-up a period away; intake under load after them then logs in no
// more and runs the intake's procedure on the connections warmed.
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
	if exec.Logins != warmConns {
		t.Errorf("WarmExecution logged in %d connections of the executor's pool; want %d", exec.Logins, warmConns)
	}
	if db.warmth.due(db.warmEvery()) {
		t.Error("after WarmExecution, a follower's warm-up of the executor's pool was due at once")
	}
	var stored int
	if err := db.queries.QueryRowContext(ctx, `SELECT COUNT(*) FROM submission_intents`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != 0 {
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

// TestQueryPoolGrowsOneWarmedConnectionAStep: where each connection
// compiles at its first call (Babelfish), WarmQueries logs in only
// Config.WarmConns connections, and more submissions at once than those
// for a while make the pool grow by at most one login a step, each step
// warming a connection in a transaction it rolls back (one may be under
// way at the end), up to MaxOpenConns and never closing one. Where the server shares its plans (SQL Server), the pool
// does not grow by steps and WarmQueries warms every idle connection.
func TestQueryPoolGrowsOneWarmedConnectionAStep(t *testing.T) {
	const warm, most, every, workers, load = 2, 6, 100 * time.Millisecond, 16, 3 * time.Second
	db, rc := countedDB(t, Config{MaxOpenConns: most, WarmConns: warm, growEvery: every})
	ctx := t.Context()
	before := rc.snapshot(poolQueries)
	if err := db.WarmQueries(ctx); err != nil {
		t.Fatalf("WarmQueries: %v", err)
	}
	warmed := rc.snapshot(poolQueries)
	if !db.engine.firstCallCompiles {
		if db.growth != nil || warmed.Logins != most {
			t.Fatalf("on SQL Server the query pool grows by steps (%v) and WarmQueries logged in %d connections; want no steps and %d", db.growth != nil, warmed.Logins, most)
		}
		return
	}
	if got := warmed.Logins; got != warm {
		t.Fatalf("WarmQueries logged in %d connections of the query pool; want Config.WarmConns, %d (%d before it)", got, warm, before.Logins)
	}

	s := db.Store()
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := 0; time.Since(start) < load; i++ {
				id := fmt.Sprintf("grow-%d-%d", w, i)
				if _, err := s.CreateIntent(ctx, core.NewIntent(id, testContract, []byte(`{}`), created)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	steps := int(time.Since(start)/every) + 1
	got := rc.since(poolQueries, warmed)
	switch {
	case got.Logins == 0:
		t.Fatalf("%d submitters on %d connections for %d steps: the pool did not grow", workers, warm, steps)
	case got.Logins > min(steps, most-warm):
		t.Fatalf("the pool logged in %d more connections in %d steps; want at most one a step, and %d in all", got.Logins, steps, most)
	case got.Requests[kindRollback] < got.Logins-1:
		t.Fatalf("the pool logged in %d more connections, and its steps warmed %d", got.Logins, got.Requests[kindRollback])
	case got.Closes != 0:
		t.Fatalf("the pool closed %d connections under load", got.Closes)
	}
	t.Logf("%d steps: %d logins, %d warm-ups", steps, got.Logins, got.Requests[kindRollback])
}

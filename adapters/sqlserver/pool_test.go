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
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

// TestPoolsKeepTheirConnections shows that no pool churns: each opens at
// most as many connections as it may hold, once, and keeps them between
// bursts of load. Intake and reads from more goroutines than the query
// pool has connections, twice with the pool idle in between, and the
// lease operations alongside; the counter sees every login and every
// close at the driver. A pool that kept fewer idle connections than it
// opens (database/sql's default keeps 2) would close the rest when a burst
// ends and log in again at the next, which on Babelfish costs the server
// the compile of each procedure again on the new connection (about 0.7 s
// of CPU for the intake's).
func TestPoolsKeepTheirConnections(t *testing.T) {
	const conns, workers, perWorker = 4, 16, 10
	db, rc := countedDB(t, Config{MaxOpenConns: conns})
	s := db.Store()
	ctx := context.Background()
	lease := leasetest.MustAcquire(t, db.Leases(), core.DefaultLeaseName, "sm-pools", time.Hour)
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

	burst := func(round int) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, workers+1)
		for w := range workers {
			wg.Go(func() {
				for i := range perWorker {
					id := fmt.Sprintf("pool-%d-%d-%d", round, w, i)
					if _, err := s.CreateIntent(ctx, core.NewIntent(id, testContract, json.RawMessage(`{}`), created)); err != nil {
						errs <- err
						return
					}
					if _, err := s.GetIntent(ctx, id); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Go(func() {
			for range perWorker {
				if _, err := db.Leases().Renew(ctx, ports.RenewLeaseParams{Fence: lease.Fence(), Duration: time.Hour}); err != nil {
					errs <- err
					return
				}
				if _, _, err := db.Leases().Read(ctx, core.DefaultLeaseName); err != nil {
					errs <- err
					return
				}
			}
		})
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
	}

	burst(1)
	first := map[string]poolCounts{poolQueries: rc.snapshot(poolQueries), poolLeases: rc.snapshot(poolLeases)}
	burst(2)
	for pool, most := range map[string]int{poolQueries: conns, poolLeases: leaseConns} {
		got := rc.snapshot(pool)
		if got.Logins > most {
			t.Errorf("the %s pool logged in %d times; it holds at most %d connections", pool, got.Logins, most)
		}
		if got.Closes != 0 {
			t.Errorf("the %s pool closed %d connections under load", pool, got.Closes)
		}
		if more := got.Logins - first[pool].Logins; more != 0 {
			t.Errorf("the %s pool logged in %d more times in the second burst: it did not keep its connections", pool, more)
		}
		t.Logf("%s pool: %d logins, %d round trips over two bursts", pool, got.Logins, got.RoundTrips())
	}
}

// TestQueryPoolIsSizedForTheEngine: a configuration that leaves the query
// pool's size unset gets the engine's (engine.queryConns), and WarmQueries
// warms that many; one that sets it keeps its own.
func TestQueryPoolIsSizedForTheEngine(t *testing.T) {
	db, dsn := migratedDB(t, databaseOptions{})
	want := sqlServer.queryConns
	if serverIsBabelfish(t, adminDB(t)) {
		want = babelfish.queryConns
	}
	if got := db.queries.Stats().MaxOpenConnections; got != want || db.cfg.MaxIdleConns != want {
		t.Errorf("query pool of %d (%d idle) with the size unset; want the engine's %d", got, db.cfg.MaxIdleConns, want)
	}
	if err := db.WarmQueries(t.Context()); err != nil {
		t.Fatalf("WarmQueries: %v", err)
	}
	if got := db.queries.Stats().Idle; got != want {
		t.Errorf("WarmQueries left %d idle connections in the query pool; want the engine's %d", got, want)
	}
	set, err := Open(t.Context(), Config{DSN: dsn, Logger: testLogger(t), MaxOpenConns: 7})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer func() { _ = set.Close() }()
	if got := set.queries.Stats().MaxOpenConnections; got != 7 || set.cfg.MaxIdleConns != 7 {
		t.Errorf("query pool of %d (%d idle) with 7 set; want 7", got, set.cfg.MaxIdleConns)
	}
}

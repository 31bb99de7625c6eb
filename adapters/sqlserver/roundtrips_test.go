package sqlserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tsql "github.com/sqlc-dev/teesql/parser"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

// countedDB opens an empty migrated database through the request counter.
func countedDB(t *testing.T, cfg Config) (*DB, *requestCounter) {
	t.Helper()
	dsn, fresh := reusableDatabase(t)
	rc := newRequestCounter()
	cfg.DSN, cfg.Logger, cfg.wrapConnector = dsn, testLogger(t), rc.wrap
	db, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	// The counts are the store's own requests: on Babelfish the statistics'
	// check and run would land in whichever operation crossed their
	// threshold.
	withoutStatistics(db)
	if fresh {
		if err := db.Migrate(context.Background(), "up"); err != nil {
			t.Fatalf("migrate up: %v", err)
		}
	} else {
		emptyTables(t, db)
	}
	return db, rc
}

// statementsIn counts the top-level statements of the query texts, as
// teesql parses them: an IF or TRY/CATCH counts once with its block.
func statementsIn(t testing.TB, queries []string) int {
	t.Helper()
	n := 0
	parsed := map[string]int{}
	for _, q := range queries {
		if c, ok := parsed[q]; ok {
			n += c
			continue
		}
		text, err := toDriverText(q)
		if err != nil {
			t.Fatalf("%v:\n%s", err, q)
		}
		script, err := tsql.Parse(context.Background(), strings.NewReader(text))
		if err != nil {
			t.Fatalf("not T-SQL: %v\n%s", err, text)
		}
		c := 0
		for _, batch := range script.Batches {
			c += len(batch.Statements)
		}
		parsed[q] = c
		n += c
	}
	return n
}

// TestRoundTripsPerRequest pins the round trips each store operation of
// the hot paths costs on SQL Server, counted at the driver: one per
// CreateIntent, new or repeated (the repeat answered with its attempts and
// flag), one per GetIntent, one per batch of intents up to
// rowsPerRequest(1) (a call of dbo.submission_insert_intents, one
// statement, when every payload is printable ASCII; else the text
// statement of an insert and two reads), one per GetIntents, and one per
// StartAttempts or FinishAttempts batch of any size (one procedure call
// each). The lease and migration pools send nothing meanwhile.
// docs/sqlserver.md reports the table this test logs.
func TestRoundTripsPerRequest(t *testing.T) {
	db, rc := countedDB(t, Config{})
	s := db.Store()
	ctx := context.Background()
	fence := leasetest.MustAcquire(t, db.Leases(), core.DefaultLeaseName, "sm-roundtrips", time.Hour).Fence()
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	newIntent := func(id string) core.Intent {
		return core.NewIntent(id, testContract, json.RawMessage(`{"to":"+100"}`), created)
	}
	at := func(ms int) time.Time { return created.Add(time.Duration(ms) * time.Millisecond) }

	var report []string
	leases0, plain0 := rc.snapshot(poolLeases), rc.snapshot(poolPlain)
	// measureOn runs op and checks the round trips it sent on pool (any
	// number when want is negative: reported, not pinned).
	measureOn := func(pool, name string, want int, op func() error) {
		t.Helper()
		before := rc.snapshot(pool)
		if err := op(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := rc.since(pool, before)
		if want >= 0 && got.RoundTrips() != want {
			t.Errorf("%s took %d round trips (%v by kind: query, begin, commit, rollback, ping), want %d",
				name, got.RoundTrips(), got.Requests, want)
		}
		report = append(report, fmt.Sprintf("| %s | %d | %d |", name, got.RoundTrips(), statementsIn(t, got.Queries)))
	}
	measure := func(name string, want int, op func() error) { t.Helper(); measureOn(poolQueries, name, want, op) }
	// The executor's reads and batches have a pool of their own (exec_pool.go).
	measureExec := func(name string, want int, op func() error) { t.Helper(); measureOn(poolExecutor, name, want, op) }
	starts := func(ids []string, n int, at time.Time) func() error {
		return func() error {
			ps := make([]ports.StartAttemptParams, len(ids))
			for i, id := range ids {
				ps[i] = ports.StartAttemptParams{Fence: fence, IntentID: id, Number: n, StartedAt: at}
			}
			return firstError(s.StartAttempts(ctx, ps))
		}
	}
	finishes := func(ids []string, n int, at time.Time, flag bool) func() error {
		return func() error {
			ps := make([]ports.FinishAttemptParams, len(ids))
			for i, id := range ids {
				o := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonDuplicateReference}
				ps[i] = ports.FinishAttemptParams{Fence: fence, IntentID: id, Number: n, FinishedAt: at, Outcome: &o, Sent: true,
					Decision: core.Decision{Status: core.StatusPending, NextDueAt: at.Add(time.Second), PossiblyAccepted: flag}}
			}
			return firstError(s.FinishAttempts(ctx, ps))
		}
	}

	// Intake, and the two attempts of one intent that flag it.
	measure("CreateIntent, new", 1, func() error { _, err := s.CreateIntent(ctx, newIntent("rt-1")); return err })
	measureExec("StartAttempts, 1 item", 1, starts([]string{"rt-1"}, 1, at(1)))
	measureExec("FinishAttempts, 1 item", 1, finishes([]string{"rt-1"}, 1, at(2), false))
	measureExec("StartAttempts, 1 item (2nd attempt)", 1, starts([]string{"rt-1"}, 2, at(3)))
	measureExec("FinishAttempts, 1 item (flags it possibly accepted)", 1, finishes([]string{"rt-1"}, 2, at(4), true))
	measure("CreateIntent, repeat of an intent with 2 attempts", 1, func() error {
		res, err := s.CreateIntent(ctx, newIntent("rt-1"))
		if err == nil && (res.Created || len(res.Intent.Attempts) != 2 || !res.Intent.PossiblyAccepted) {
			err = fmt.Errorf("got created=%v, %d attempts, possiblyAccepted=%v; want the stored intent with 2 attempts, flagged",
				res.Created, len(res.Intent.Attempts), res.Intent.PossiblyAccepted)
		}
		return err
	})
	measure("GetIntent", 1, func() error {
		in, err := s.GetIntent(ctx, "rt-1")
		if err == nil && (len(in.Attempts) != 2 || !in.PossiblyAccepted) {
			err = fmt.Errorf("got %d attempts, possiblyAccepted=%v", len(in.Attempts), in.PossiblyAccepted)
		}
		return err
	})
	measure("GetIntent, missing", 1, func() error {
		if _, err := s.GetIntent(ctx, "rt-missing"); err != core.ErrIntentNotFound {
			return fmt.Errorf("got %v, want core.ErrIntentNotFound", err)
		}
		return nil
	})

	// Batches: the largest that fits one request, then one more.
	most := rowsPerRequest(1)
	batch := []core.Intent{newIntent("rt-1")}
	for i := range most - 1 {
		batch = append(batch, newIntent(fmt.Sprintf("rt-b%03d", i)))
	}
	measure(fmt.Sprintf("CreateIntents, %d items, one taken", most), 1, func() error {
		res, err := s.CreateIntents(ctx, batch)
		if err == nil && (res[0].Created || len(res[0].Intent.Attempts) != 2 || !res[0].Intent.PossiblyAccepted || !res[1].Created) {
			err = fmt.Errorf("the taken item: created=%v, %d attempts, flagged=%v; a new one created=%v",
				res[0].Created, len(res[0].Intent.Attempts), res[0].Intent.PossiblyAccepted, res[1].Created)
		}
		return err
	})
	var nonASCII []core.Intent
	for i := range 100 {
		nonASCII = append(nonASCII, core.NewIntent(fmt.Sprintf("rt-n%03d", i), testContract, json.RawMessage(`{"to":"+100","text":"é"}`), created))
	}
	measure("CreateIntents, 100 items with non-ASCII payloads (the text statement)", 1, func() error {
		_, err := s.CreateIntents(ctx, nonASCII)
		return err
	})
	var bigger []core.Intent
	for i := range most + 1 {
		bigger = append(bigger, newIntent(fmt.Sprintf("rt-c%03d", i)))
	}
	measure(fmt.Sprintf("CreateIntents, %d items (two requests in a transaction)", most+1), 4, func() error {
		_, err := s.CreateIntents(ctx, bigger)
		return err
	})
	ids := make([]string, 0, most)
	for _, in := range bigger[:most] {
		ids = append(ids, in.IntentID)
	}
	measureExec(fmt.Sprintf("GetIntents, %d intents", len(ids)), 1, func() error {
		got, err := s.GetIntents(ctx, ids)
		if err == nil && len(got) != len(ids) {
			err = fmt.Errorf("read %d of %d intents", len(got), len(ids))
		}
		return err
	})
	// The executor's batches are one JSON parameter a call whatever their
	// size, and one call on SQL Server; on Babelfish a call of 64 items
	// at most (engine.callItems).
	batchIDs := ids[:min(len(ids), 256)]
	calls := 1
	if n := db.engine.callItems; n > 0 {
		calls = (len(batchIDs) + n - 1) / n
	}
	measureExec(fmt.Sprintf("StartAttempts, %d items", len(batchIDs)), calls, starts(batchIDs, 1, at(10)))
	measureExec(fmt.Sprintf("FinishAttempts, %d items", len(batchIDs)), calls, finishes(batchIDs, 1, at(11), false))
	measure("ListIntents, a page of 50", 2, func() error {
		_, err := s.ListIntents(ctx, ports.ListIntentsParams{Limit: 50})
		return err
	})
	measure("ResubmissionLinks, a page of 50", 1, func() error {
		_, err := s.ResubmissionLinks(ctx, ids[:50])
		return err
	})

	if got := rc.since(poolLeases, leases0); got.RoundTrips() != 0 || got.Logins != 0 {
		t.Errorf("the store's operations used the lease pool: %+v", got.Requests)
	}
	// The lease's own operations, on its pool (the pin and a follower's
	// warm-up of the executor's lanes use pools of their own).
	measureOn(poolLeases, "lease: Renew", 1, func() error {
		_, err := db.Leases().Renew(ctx, ports.RenewLeaseParams{Fence: fence, Duration: time.Hour})
		return err
	})
	follower := ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "sm-follower", Duration: time.Hour}
	// A follower's first acquire of a held lease also rehearses the
	// takeover, once per warm-up period (lease_prepare.go); the ticks
	// after it are what a follower sends every acquire interval.
	if _, _, err := db.Leases().Acquire(ctx, follower); err != nil {
		t.Fatal(err)
	}
	measureOn(poolLeases, "lease: Acquire tick of a follower while it is held", 1, func() error {
		_, acquired, err := db.Leases().Acquire(ctx, follower)
		if err == nil && acquired {
			err = fmt.Errorf("a held lease was acquired")
		}
		return err
	})
	if err := db.Leases().Release(ctx, fence); err != nil {
		t.Fatal(err)
	}
	measureOn(poolLeases, "lease: Acquire by a follower that takes the expired lease over", 1, func() error {
		lease, acquired, err := db.Leases().Acquire(ctx, follower)
		if err == nil && (!acquired || lease.Epoch != fence.Epoch+1) {
			err = fmt.Errorf("the expired lease was not taken over at epoch %d: acquired %v, %+v", fence.Epoch+1, acquired, lease)
		}
		return err
	})
	if got := rc.since(poolPlain, plain0); got.RoundTrips() != 0 || got.Logins != 0 {
		t.Errorf("the store's operations used the migration pool: %+v", got.Requests)
	}
	t.Logf("round trips and statements per store operation on %s:\n| operation | round trips | statements |\n| --- | --- | --- |\n%s",
		map[bool]string{true: "Babelfish", false: "SQL Server"}[db.Babelfish()], strings.Join(report, "\n"))
}

// firstError is the first non-nil error of a batch's answers.
func firstError(errs []error) error {
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
	}
	return nil
}

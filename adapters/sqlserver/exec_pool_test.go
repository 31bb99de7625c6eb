package sqlserver

import (
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

// TestFollowerWarmsTheExecutorPool: a follower's acquire that finds the
// lease held warms a connection of each of the executor's lanes, once per
// warm-up period, writing nothing; the leader it becomes runs its reads of
// due intents, its batches of both kinds and its reads before its first
// attempt on those connections without logging in again; and an acquire that finds the lease near its expiry warms
// nothing, so a takeover is never delayed by it.
func TestFollowerWarmsTheExecutorPool(t *testing.T) {
	db, rc := countedDB(t, Config{})
	ctx := t.Context()
	name := uniqueLeaseName(t, "warm-")
	leader := leasetest.MustAcquire(t, db.Leases(), name, "leader", leasetest.LongLease)
	if got := rc.snapshot(poolExecutor); got.Logins != 0 || got.RoundTrips() != 0 {
		t.Fatalf("the leader's acquire used the executor's pool: %+v", got)
	}

	follow := func(holder string) {
		t.Helper()
		if _, ok, err := db.Leases().Acquire(ctx, ports.AcquireLeaseParams{LeaseName: name, HolderID: holder, Duration: time.Hour}); err != nil || ok {
			t.Fatalf("a follower's acquire of a held lease: acquired=%v err=%v", ok, err)
		}
	}
	follow("follower")
	warmed := rc.snapshot(poolExecutor)
	// One connection per lane: the read of due intents; BEGIN, the
	// warm-up's lease and intent, a reservation and ROLLBACK; BEGIN, the
	// lease and intent, the attempt opened as text, a result and ROLLBACK.
	// And one of the fourth pool: a new leader's first reads (the change
	// cursor in a transaction of its own, a page of pending intents, the
	// gateway pauses).
	const roundTrips = 1 + 5 + 6 + 5
	if warmed.Logins != int(laneCount)+1 || warmed.RoundTrips() != roundTrips ||
		warmed.Requests[kindRollback] != 2 || warmed.Requests[kindCommit] != 1 {
		t.Fatalf("the follower's acquire logged in %d times and sent %d round trips on the executor's pools (%v); want %d and %d, two rollbacks and a commit",
			warmed.Logins, warmed.RoundTrips(), warmed.Requests, laneCount+1, roundTrips)
	}
	// Each procedure is called once, on its own lane: a lane that called
	// another's would compile it for nothing.
	calls := map[string]int{}
	for _, q := range warmed.Queries {
		calls[q]++
	}
	if calls[getIntentsSQL] != 1 || calls[startAttempts.text] != 1 || calls[finishAttempts.text] != 1 {
		t.Fatalf("the warm-up called GetIntents %d, StartAttempts %d and FinishAttempts %d times; want once each",
			calls[getIntentsSQL], calls[startAttempts.text], calls[finishAttempts.text])
	}
	var leases, intents, attempts int
	err := db.queries.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM submission_manager_leases),
	    (SELECT COUNT(*) FROM submission_intents), (SELECT COUNT(*) FROM submission_attempts)`).Scan(&leases, &intents, &attempts)
	if err != nil || leases != 1 || intents != 0 || attempts != 0 {
		t.Fatalf("after the warm-up %d lease rows, %d intents and %d attempts are stored (err %v); want the leader's lease alone",
			leases, intents, attempts, err)
	}
	follow("follower")
	if got := rc.since(poolExecutor, warmed); got.RoundTrips() != 0 {
		t.Fatalf("a second acquire within the warm-up period warmed again: %v", got.Requests)
	}

	// The executor of the leader's term runs on the warm connections.
	s := db.Store()
	intent := core.NewIntent("warm-1", testContract, []byte(`{"to":"+100","text":"hi"}`), time.Now().UTC())
	if _, err := s.CreateIntent(ctx, intent); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetIntents(ctx, []string{"warm-1"}); err != nil {
		t.Fatal(err)
	}
	start := ports.StartAttemptParams{Fence: leader.Fence(), IntentID: "warm-1", Number: 1, StartedAt: time.Now().UTC()}
	if err := firstError(s.StartAttempts(ctx, []ports.StartAttemptParams{start})); err != nil {
		t.Fatal(err)
	}
	o := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonProviderFailure}
	finish := ports.FinishAttemptParams{Fence: leader.Fence(), IntentID: "warm-1", Number: 1, FinishedAt: time.Now().UTC(),
		Outcome: &o, Sent: true, Decision: core.Decision{Status: core.StatusPending, NextDueAt: time.Now().UTC().Add(time.Hour)}}
	if err := firstError(s.FinishAttempts(ctx, []ports.FinishAttemptParams{finish})); err != nil {
		t.Fatal(err)
	}
	if got := rc.since(poolExecutor, warmed); got.Logins != 0 || got.RoundTrips() != 3 {
		t.Fatalf("the executor's read and batches logged in %d times and sent %d round trips (%v); want 0 and 3",
			got.Logins, got.RoundTrips(), got.Requests)
	}

	// So do a new leader's reads before its first attempt, on the fourth
	// pool.
	es := db.ExecutorStore()
	reads := rc.snapshot(poolExecutor)
	if _, err := es.LatestChange(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := es.ListPending(ctx, ports.ListPendingParams{Limit: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := es.ListPauses(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rc.since(poolExecutor, reads); got.Logins != 0 {
		t.Fatalf("a new leader's first reads logged in %d times (%v); want 0", got.Logins, got.Requests)
	}

	// Near its expiry, a held lease is left to be taken, not warmed for.
	other, rc2 := countedDB(t, Config{})
	near := uniqueLeaseName(t, "near-")
	leasetest.MustAcquire(t, other.Leases(), near, "leader", 3*time.Second)
	if _, ok, err := other.Leases().Acquire(ctx, ports.AcquireLeaseParams{LeaseName: near, HolderID: "follower", Duration: time.Hour}); err != nil || ok {
		t.Fatalf("a follower's acquire of a held lease: acquired=%v err=%v", ok, err)
	}
	if got := rc2.snapshot(poolExecutor); got.RoundTrips() != 0 {
		t.Fatalf("an acquire of a lease with less than half the duration left warmed the executor's pool: %v", got.Requests)
	}
}

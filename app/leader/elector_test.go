package leader_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/leader"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// TestConcurrentElectorsElectExactlyOneLeader starts three electors on one
// lease and runs them through 30 s of acquire and renew cycles, one timer
// event at a time: exactly one executor ever runs, at epoch 1, and only its
// elector reports leadership.
func TestConcurrentElectorsElectExactlyOneLeader(t *testing.T) {
	w := newWorld(t)
	// Acquire intervals whose ticks never coincide with the renewals (every
	// 3 s) within the run, so every pending timer names its elector.
	intervals := []time.Duration{4100 * time.Millisecond, 5300 * time.Millisecond, 7700 * time.Millisecond}
	electors := make([]*leader.Elector, 3)
	execs := make([]*executor, 3)
	for i, a := range intervals {
		electors[i], execs[i] = w.start(w.config(fmt.Sprintf("sm-%02d", i+1), a))
	}
	// The winner arms its renew timer; the others arm acquire timers, which
	// proves their acquire returned without the lease.
	w.waitTimer(t0.Add(renewInterval))
	winner := -1
	for i := range electors {
		if _, ok := electors[i].Leadership(); ok {
			if winner >= 0 {
				t.Fatalf("electors %d and %d both lead", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("no elector leads")
	}
	next := make([]time.Time, 3) // each elector's pending timer
	for i, a := range intervals {
		next[i] = t0.Add(a)
		if i == winner {
			next[i] = t0.Add(renewInterval)
		}
	}
	w.waitTimers(next)
	call := execs[winner].next()
	if call.lease.Epoch != 1 || !call.stillLeader() {
		t.Fatalf("winner's executor: epoch %d stillLeader %v, want epoch 1 and true", call.lease.Epoch, call.stillLeader())
	}

	for events := 0; ; events++ {
		at := slices.MinFunc(next, time.Time.Compare)
		if at.After(t0.Add(30 * time.Second)) {
			if events < 15 {
				t.Fatalf("only %d timer events in 30 s", events)
			}
			break
		}
		w.clock.AdvanceTo(at)
		for i, a := range intervals {
			if i == winner && next[i].Equal(at) {
				next[i] = at.Add(renewInterval)
			} else if next[i].Equal(at) {
				next[i] = at.Add(a)
			}
		}
		w.waitTimers(next)
		for i := range electors {
			if _, ok := electors[i].Leadership(); ok != (i == winner) {
				t.Fatalf("at t0+%s elector %d leads=%v, want only elector %d to lead", at.Sub(t0), i, ok, winner)
			}
			if i != winner {
				execs[i].none()
			}
		}
	}
	if l := w.lease(); l.Epoch != 1 || l.HolderID != fmt.Sprintf("sm-%02d", winner+1) {
		t.Fatalf("after 30 s the lease is %+v, want the first winner at epoch 1", l)
	}
	if !call.stillLeader() {
		t.Fatal("a renewing leader's stillLeader turned false")
	}
	if n := len(w.logs.entries(t, "leader_acquired")); n != 1 {
		t.Fatalf("%d leader_acquired logs, want 1", n)
	}
}

func TestLeaderRenewsAndKeepsItsEpoch(t *testing.T) {
	w := newWorld(t)
	e, x := w.start(w.config("sm-01", 4*time.Second))
	call := x.next()
	for i := 1; i <= 4; i++ {
		at := t0.Add(time.Duration(i) * renewInterval)
		w.waitTimer(at)
		w.clock.AdvanceTo(at)
		w.waitTimer(at.Add(renewInterval))
		l := w.lease()
		if l.Epoch != 1 || !l.RenewedAt.Equal(at) || !l.ExpiresAt.Equal(at.Add(leaseDuration)) {
			t.Fatalf("after renewal %d lease = %+v, want epoch 1 renewed at t0+%s", i, l, at.Sub(t0))
		}
		if got, ok := e.Leadership(); !ok || !sameRow(got, l) {
			t.Fatalf("Leadership() = %+v, %v; want the renewed lease and true", got, ok)
		}
	}
	if !call.stillLeader() {
		t.Fatal("stillLeader false while renewals succeed")
	}
	renewed := w.logs.entries(t, "leader_renewed")
	if len(renewed) != 4 {
		t.Fatalf("%d leader_renewed logs, want 4", len(renewed))
	}
	last := renewed[3]
	if last["holder_id"] != "sm-01" || last["lease_epoch"] != float64(1) || last["expires_at"] == nil {
		t.Fatalf("leader_renewed log %v lacks holder_id, lease_epoch or expires_at", last)
	}
}

// TestRenewFailureStopsTheExecutorAtOnce covers the spec's "leader stops
// executing immediately on lease loss" at the elector: a renew that fails
// with a SQL error ends the term before the executor is even told, the
// lease is released for a quick failover, and the instance leads again only
// through a new acquire, at a new epoch.
func TestRenewFailureStopsTheExecutorAtOnce(t *testing.T) {
	w := newWorld(t)
	leases := &faultyLeases{LeaseStore: w.store}
	cfg := w.config("sm-01", 4*time.Second)
	cfg.Leases = leases
	e, x := w.start(cfg)
	first := x.next()

	leases.failRenew(errors.New("read tcp: connection reset by peer"))
	w.waitTimer(t0.Add(renewInterval))
	w.clock.Advance(renewInterval)
	first.waitReturned(t)
	if !first.cancelled || first.stillLeaderAtCancel {
		t.Fatalf("executor cancelled=%v stillLeader at cancel=%v, want cancelled and already not leader", first.cancelled, first.stillLeaderAtCancel)
	}
	if first.stillLeader() {
		t.Fatal("stillLeader true after the renew failed")
	}
	if _, ok := e.Leadership(); ok {
		t.Fatal("Leadership() reports leader after the renew failed")
	}
	// Back to follower: the next acquire is one acquire interval later.
	w.waitTimer(t0.Add(renewInterval + 4*time.Second))
	if l := w.lease(); !l.ExpiresAt.Equal(t0.Add(renewInterval)) {
		t.Fatalf("lease expires at t0+%s, want released at t0+%s", l.ExpiresAt.Sub(t0), renewInterval)
	}
	failed := w.logs.entries(t, "leader_renew_failed")
	if len(failed) != 1 || failed[0]["sql_error"] != "read tcp: connection reset by peer" || failed[0]["holder_id"] != "sm-01" {
		t.Fatalf("leader_renew_failed logs = %v, want one with sql_error and holder_id", failed)
	}
	if lost := w.logs.entries(t, "leader_lost"); len(lost) != 1 || lost[0]["lease_epoch"] != float64(1) {
		t.Fatalf("leader_lost logs = %v, want one at epoch 1", lost)
	}

	leases.renewErr.Store(nil)
	w.clock.Advance(4 * time.Second)
	second := x.next()
	if second.lease.Epoch != 2 || !second.stillLeader() {
		t.Fatalf("re-acquired at epoch %d stillLeader %v, want epoch 2 and true", second.lease.Epoch, second.stillLeader())
	}
	if first.stillLeader() {
		t.Fatal("the ended term's stillLeader turned true again when a new term began")
	}
	if got, want := w.metrics.snapshot(), []string{"leader@1", "follower@1", "leader@2"}; !slices.Equal(got, want) {
		t.Fatalf("Leadership metrics = %v, want %v", got, want)
	}
}

// TestFencedRenewDoesNotTouchTheSuccessorsLease: when another holder took
// the lease over, the old leader stops and leaves the row alone.
func TestFencedRenewDoesNotTouchTheSuccessorsLease(t *testing.T) {
	w := newWorld(t)
	leases := &faultyLeases{LeaseStore: w.store}
	cfg := w.config("sm-01", 4*time.Second)
	cfg.Leases = leases
	_, x := w.start(cfg)
	call := x.next()
	w.waitTimer(t0.Add(renewInterval))
	// A successor takes over (as after an expiry the old leader slept through).
	ctx := context.Background()
	if err := w.store.Release(ctx, call.lease.Fence()); err != nil {
		t.Fatal(err)
	}
	successor, ok, err := w.store.Acquire(ctx, leaseParams("sm-02"))
	if err != nil || !ok {
		t.Fatalf("successor acquire: ok=%v err=%v", ok, err)
	}
	w.clock.Advance(renewInterval)
	call.waitReturned(t)
	if !call.cancelled || call.stillLeaderAtCancel {
		t.Fatalf("executor cancelled=%v stillLeader at cancel=%v, want cancelled and not leader", call.cancelled, call.stillLeaderAtCancel)
	}
	w.waitTimer(t0.Add(renewInterval + 4*time.Second))
	if l := w.lease(); !sameRow(l, successor) {
		t.Fatalf("lease = %+v, want the successor's %+v untouched", l, successor)
	}
	if n := leases.releases.Load(); n != 0 {
		t.Fatalf("the fenced leader called Release %d times, want 0", n)
	}
	lost := w.logs.entries(t, "leader_lost")
	if len(lost) != 1 || lost[0]["reason"] != "renew fenced" {
		t.Fatalf("leader_lost logs = %v, want one with reason renew fenced", lost)
	}
}

// TestPausedLeaderStopsBeforeItsNextWrite models a process paused (SIGSTOP,
// a long GC) past its lease: its renew timer fires only on waking. The
// moment the local clock says the lease may have expired, stillLeader is
// false, before the elector goroutine even runs; then the elector gives up
// without renewing, since the lease may be someone else's already.
func TestPausedLeaderStopsBeforeItsNextWrite(t *testing.T) {
	w := newWorld(t)
	e, x := w.start(w.config("sm-01", 4*time.Second))
	call := x.next()
	w.waitTimer(t0.Add(renewInterval))

	w.clock.Advance(leaseDuration)
	if call.stillLeader() {
		t.Fatal("stillLeader true after the lease duration passed without a renewal")
	}
	if _, ok := e.Leadership(); ok {
		t.Fatal("Leadership() true after the lease duration passed without a renewal")
	}
	call.waitReturned(t)
	if !call.cancelled || call.stillLeaderAtCancel {
		t.Fatalf("executor cancelled=%v stillLeader at cancel=%v, want cancelled and not leader", call.cancelled, call.stillLeaderAtCancel)
	}
	w.waitTimer(t0.Add(leaseDuration + 4*time.Second))
	failed := w.logs.entries(t, "leader_renew_failed")
	if len(failed) != 1 || failed[0]["error"] == nil {
		t.Fatalf("leader_renew_failed logs = %v, want one naming the local expiry", failed)
	}
	if l := w.lease(); !l.RenewedAt.Equal(t0) {
		t.Fatalf("lease renewed at t0+%s, want no renewal after the pause", l.RenewedAt.Sub(t0))
	}
}

// TestHungRenewGivesUpAtLocalExpiry: a renew that hangs (a stalled
// connection) is abandoned when the lease may expire, and leadership is
// dropped then, not when the driver finally times out.
func TestHungRenewGivesUpAtLocalExpiry(t *testing.T) {
	w := newWorld(t)
	leases := &faultyLeases{LeaseStore: w.store}
	leases.hangRenew.Store(true)
	cfg := w.config("sm-01", 4*time.Second)
	cfg.Leases = leases
	_, x := w.start(cfg)
	call := x.next()
	w.waitTimer(t0.Add(renewInterval))
	w.clock.Advance(renewInterval)
	w.waitTimer(t0.Add(localValidity)) // the hung renew's bound
	w.clock.AdvanceTo(t0.Add(localValidity - time.Nanosecond))
	if !call.stillLeader() {
		t.Fatal("stillLeader false while the acquire's local validity still covers now")
	}
	w.clock.Advance(time.Nanosecond)
	if call.stillLeader() {
		t.Fatal("stillLeader true at the end of the local validity")
	}
	call.waitReturned(t)
	if !call.cancelled || call.stillLeaderAtCancel {
		t.Fatalf("executor cancelled=%v stillLeader at cancel=%v, want cancelled and not leader", call.cancelled, call.stillLeaderAtCancel)
	}
	w.waitTimer(t0.Add(localValidity + 4*time.Second))
	// The row was still ours in database time, so it was released.
	if l := w.lease(); !l.ExpiresAt.Equal(t0.Add(localValidity)) {
		t.Fatalf("lease expires at t0+%s, want released at t0+%s", l.ExpiresAt.Sub(t0), localValidity)
	}
}

// TestExecutorErrorHandsOverWithoutWaitingForExpiry: when the executor stops
// on a fenced write or a store error, the elector drops leadership, releases
// the lease, and a follower takes over at its next acquire tick rather than
// after the lease duration.
func TestExecutorErrorHandsOverWithoutWaitingForExpiry(t *testing.T) {
	w := newWorld(t)
	e1, x1 := w.start(w.config("sm-01", 4*time.Second))
	first := x1.next()
	w.waitTimer(t0.Add(renewInterval))
	e2, x2 := w.start(w.config("sm-02", 3500*time.Millisecond))
	w.waitTimer(t0.Add(3500 * time.Millisecond)) // sm-02 follows

	first.finish <- fmt.Errorf("start attempt: %w", core.ErrFenced)
	first.waitReturned(t)
	w.waitTimer(t0.Add(4 * time.Second)) // sm-01 follows again
	if first.stillLeader() {
		t.Fatal("stillLeader true after the executor failed")
	}
	if _, ok := e1.Leadership(); ok {
		t.Fatal("sm-01 still reports leadership after its executor failed")
	}
	if l := w.lease(); !l.ExpiresAt.Equal(t0) {
		t.Fatalf("lease expires at t0+%s, want released at t0", l.ExpiresAt.Sub(t0))
	}

	w.clock.Advance(3500 * time.Millisecond)
	second := x2.next()
	if second.lease.HolderID != "sm-02" || second.lease.Epoch != 2 {
		t.Fatalf("successor lease %+v, want sm-02 at epoch 2", second.lease)
	}
	if l, ok := e2.Leadership(); !ok || l.Epoch != 2 {
		t.Fatalf("sm-02 Leadership() = %+v, %v; want epoch 2 and true", l, ok)
	}
	w.clock.AdvanceTo(t0.Add(4 * time.Second)) // sm-01's acquire tick: the lease is held
	w.waitTimer(t0.Add(8 * time.Second))
	x1.none()
	if l, ok := e1.Leadership(); ok || l.HolderID != "sm-02" {
		t.Fatalf("sm-01 Leadership() = %+v, %v; want follower seeing sm-02", l, ok)
	}
	lost := w.logs.entries(t, "leader_lost")
	if len(lost) != 1 || lost[0]["holder_id"] != "sm-01" || lost[0]["released"] != true {
		t.Fatalf("leader_lost logs = %v, want sm-01's with released=true", lost)
	}
}

// TestShutdownStopsTheExecutorAndReleases: cancelling Run stops the executor,
// waits for it, releases the lease and returns nil.
func TestShutdownStopsTheExecutorAndReleases(t *testing.T) {
	w := newWorld(t)
	e, err := leader.New(w.config("sm-01", 4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	x := &executor{t: t, calls: make(chan *leadCall, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx, x.lead) }()
	call := x.next()
	w.waitTimer(t0.Add(renewInterval))
	w.clock.Advance(time.Second)

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v after cancel, want nil", err)
		}
	case <-time.After(waitBound):
		t.Fatalf("Run did not return within %s of cancel", waitBound)
	}
	select {
	case <-call.returned:
	default:
		t.Fatal("Run returned before its executor did")
	}
	if !call.cancelled || call.stillLeaderAtCancel {
		t.Fatalf("executor cancelled=%v stillLeader at cancel=%v, want cancelled and not leader", call.cancelled, call.stillLeaderAtCancel)
	}
	if l := w.lease(); !l.ExpiresAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("lease expires at t0+%s, want released at shutdown (t0+1s)", l.ExpiresAt.Sub(t0))
	}
	if n := len(w.clock.Timers()); n != 0 {
		t.Fatalf("%d timers still pending after Run returned", n)
	}
	lost := w.logs.entries(t, "leader_lost")
	if len(lost) != 1 || lost[0]["reason"] != "shutdown" || lost[0]["level"] != "INFO" {
		t.Fatalf("leader_lost logs = %v, want one INFO with reason shutdown", lost)
	}
}

func TestAcquireErrorIsLoggedAndRetried(t *testing.T) {
	w := newWorld(t)
	leases := &faultyLeases{LeaseStore: w.store}
	leases.failAcquire(fmt.Errorf("%w: dial tcp 10.0.0.5:1433: connection refused", core.ErrStoreUnavailable))
	cfg := w.config("sm-01", 4*time.Second)
	cfg.Leases = leases
	e, x := w.start(cfg)
	w.waitTimer(t0.Add(4 * time.Second))
	x.none()
	if _, ok := e.Leadership(); ok {
		t.Fatal("Leadership() true after a failed acquire")
	}
	failed := w.logs.entries(t, "leader_acquire_failed")
	if len(failed) != 1 || failed[0]["sql_error"] == nil || failed[0]["took"] == nil || failed[0]["level"] != "WARN" {
		t.Fatalf("leader_acquire_failed logs = %v, want one WARN with sql_error and took", failed)
	}
	w.clock.Advance(4 * time.Second)
	if call := x.next(); call.lease.Epoch != 1 {
		t.Fatalf("acquired at epoch %d, want 1", call.lease.Epoch)
	}
	acquired := w.logs.entries(t, "leader_acquired")
	if len(acquired) != 1 || acquired[0]["holder_id"] != "sm-01" || acquired[0]["lease_epoch"] != float64(1) || acquired[0]["expires_at"] == nil || acquired[0]["took"] == nil {
		t.Fatalf("leader_acquired logs = %v, want one with holder_id, lease_epoch, expires_at, took", acquired)
	}
}

func leaseParams(holder string) ports.AcquireLeaseParams {
	return ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: holder, Duration: leaseDuration}
}

// TestShutdownDuringAcquireHandsTheLeaseBack: an acquire that succeeds as
// the elector is being stopped does not leave the lease held by nobody.
func TestShutdownDuringAcquireHandsTheLeaseBack(t *testing.T) {
	w := newWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	leases := &cancellingLeases{LeaseStore: w.store, cancel: cancel}
	cfg := w.config("sm-01", 4*time.Second)
	cfg.Leases = leases
	e, err := leader.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = e.Run(ctx, func(context.Context, core.Lease, func() bool) error {
		t.Error("an executor started although the elector was stopped during its acquire")
		return nil
	})
	if err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if l := w.lease(); l.Epoch != 1 || !l.ExpiresAt.Equal(t0) {
		t.Fatalf("lease = %+v, want epoch 1 released at once", l)
	}
	if _, ok := e.Leadership(); ok {
		t.Fatal("Leadership() true after Run returned")
	}
}

// cancellingLeases cancels the elector's context while its acquire commits,
// as a SIGTERM arriving during the statement would.
type cancellingLeases struct {
	ports.LeaseStore
	cancel context.CancelFunc
}

func (c *cancellingLeases) Acquire(ctx context.Context, p ports.AcquireLeaseParams) (core.Lease, bool, error) {
	l, ok, err := c.LeaseStore.Acquire(ctx, p)
	c.cancel()
	return l, ok, err
}

package leader_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/leader"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// skewedClock is a test database's clock: the world's clock read with an
// offset, so the database's times and the instance's never agree.
type skewedClock struct {
	ports.Clock
	offset time.Duration
}

func (c skewedClock) Now() time.Time { return c.Clock.Now().Add(c.offset) }

// rehearsingLeases is a lease store that can rehearse a takeover
// (ports.TakeoverPreparer); it records when, on the instance's clock, it
// was asked to.
type rehearsingLeases struct {
	ports.LeaseStore
	clock ports.Clock
	mu    sync.Mutex
	at    []time.Time
}

var _ ports.TakeoverPreparer = (*rehearsingLeases)(nil)

func (r *rehearsingLeases) PrepareTakeover(_ context.Context, leaseName string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if leaseName != core.DefaultLeaseName {
		return fmt.Errorf("rehearsal of lease %q, want %q", leaseName, core.DefaultLeaseName)
	}
	r.at = append(r.at, r.clock.Now())
	return nil
}

func (r *rehearsingLeases) rehearsals() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.at)
}

// TestFollowerTakesOverAtTheExpiryOfALeaseNobodyRenews: the leader crashed,
// so its lease row is left to expire. The follower looks every acquire
// interval while the lease has more than an interval left; shown a lease
// that runs out before its next look, it tries again at that expiry (plus
// the margin) and takes over then, not up to an acquire interval later. The
// database's clock is an hour behind the instance's: the wait comes from
// the lease as the store read it (ExpiresAt - ReadAt), never from comparing
// the instance's clock with database time.
func TestFollowerTakesOverAtTheExpiryOfALeaseNobodyRenews(t *testing.T) {
	w := newWorld(t)
	const skew = -time.Hour
	db := memstore.New(skewedClock{Clock: w.clock, offset: skew})
	crashed, ok, err := db.Acquire(context.Background(), leaseParams("sm-01"))
	if err != nil || !ok {
		t.Fatalf("the crashed leader's acquire: ok=%v err=%v", ok, err)
	}
	leases := &rehearsingLeases{LeaseStore: db, clock: w.clock}
	cfg := w.config("sm-02", 4*time.Second)
	cfg.Leases = leases
	e, x := w.start(cfg)

	// Looks at t0 (10 s left), t0+4 s (6 s left), t0+8 s (2 s left).
	for _, at := range []time.Duration{4 * time.Second, 8 * time.Second} {
		w.waitTimer(t0.Add(at))
		w.clock.AdvanceTo(t0.Add(at))
	}
	takeover := t0.Add(leaseDuration + leader.ExpiryMargin)
	w.waitTimers([]time.Time{takeover})
	x.none()
	w.clock.AdvanceTo(takeover)
	call := x.next()
	if call.lease.HolderID != "sm-02" || call.lease.Epoch != crashed.Epoch+1 || !call.lease.AcquiredAt.Equal(takeover.Add(skew)) {
		t.Fatalf("took over %+v, want sm-02 at epoch %d acquired at the expiry plus the margin (%v)", call.lease, crashed.Epoch+1, takeover.Add(skew))
	}
	if _, leading := e.Leadership(); !leading {
		t.Fatal("Leadership() false after the takeover")
	}
	var waits []time.Duration
	for _, rec := range w.logs.entries(t, "leader_acquire_failed") {
		waits = append(waits, time.Duration(rec["retry_in"].(float64)))
	}
	if want := []time.Duration{4 * time.Second, 4 * time.Second, 2*time.Second + leader.ExpiryMargin}; !slices.Equal(waits, want) {
		t.Fatalf("retry_in of the refused acquires = %v, want %v", waits, want)
	}
	// Rehearsed once, at the look that showed the lease running out before
	// the next one; not at the looks of a lease with an interval to run.
	if got, want := leases.rehearsals(), []time.Time{t0.Add(8 * time.Second)}; !slices.Equal(got, want) {
		t.Fatalf("takeover rehearsals at %v, want %v", got, want)
	}
}

// TestRetryIn covers the follower's wait after a refused acquire: the
// acquire interval while the lease it was shown has longer to run, the
// time to its expiry plus the margin when that is shorter, never less than
// the margin, and the interval when the store did not say when it read it.
func TestRetryIn(t *testing.T) {
	cfg := leader.Config{AcquireInterval: 4 * time.Second}
	readAt := t0.Add(-time.Hour) // database time, far from any instance's clock
	for _, tc := range []struct {
		name  string
		shown core.Lease
		want  time.Duration
	}{
		{"a live leader's lease", core.Lease{ExpiresAt: readAt.Add(7 * time.Second), ReadAt: readAt}, 4 * time.Second},
		{"exactly one interval left", core.Lease{ExpiresAt: readAt.Add(4 * time.Second), ReadAt: readAt}, 4 * time.Second},
		{"less than an interval left", core.Lease{ExpiresAt: readAt.Add(1500 * time.Millisecond), ReadAt: readAt}, 1500*time.Millisecond + leader.ExpiryMargin},
		{"expiring as it was read", core.Lease{ExpiresAt: readAt, ReadAt: readAt}, leader.ExpiryMargin},
		{"expired but not taken (a racing acquire)", core.Lease{ExpiresAt: readAt.Add(-time.Second), ReadAt: readAt}, leader.ExpiryMargin},
		{"read at an unknown time", core.Lease{ExpiresAt: readAt.Add(time.Second)}, 4 * time.Second},
	} {
		if got := cfg.RetryIn(tc.shown); got != tc.want {
			t.Errorf("%s: RetryIn = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestFollowerOfALiveLeaderLooksEveryInterval: while the leader renews, the
// lease a follower is shown always has more than an acquire interval left
// (at least lease - renew = 7 s here), so the follower looks exactly every
// acquire interval, never rehearses a takeover, and never leads.
func TestFollowerOfALiveLeaderLooksEveryInterval(t *testing.T) {
	w := newWorld(t)
	_, lx := w.start(w.config("sm-01", 4*time.Second))
	lx.next()
	w.waitTimer(t0.Add(renewInterval))
	leases := &rehearsingLeases{LeaseStore: w.store, clock: w.clock}
	cfg := w.config("sm-02", 4*time.Second)
	cfg.Leases = leases
	_, fx := w.start(cfg)
	renew, look := t0.Add(renewInterval), t0.Add(4*time.Second)
	w.waitTimers([]time.Time{renew, look})
	for looks := 0; looks < 8; {
		at := renew
		if look.Before(at) {
			at = look
		}
		w.clock.AdvanceTo(at)
		if renew.Equal(at) {
			renew = renew.Add(renewInterval)
		}
		if look.Equal(at) {
			look = look.Add(4 * time.Second)
			looks++
		}
		w.waitTimers([]time.Time{renew, look})
	}
	fx.none()
	if got := leases.rehearsals(); len(got) != 0 {
		t.Fatalf("a follower of a live leader rehearsed takeovers at %v", got)
	}
	if l := w.lease(); l.HolderID != "sm-01" || l.Epoch != 1 {
		t.Fatalf("lease %+v, want sm-01 still at epoch 1", l)
	}
}

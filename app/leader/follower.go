package leader

import (
	"context"
	"time"

	"github.com/submissionmanager/submission-manager/app/clockctx"
	"github.com/submissionmanager/submission-manager/core"
)

// A follower's waits between acquires: how long (retryIn), what it does
// meanwhile when a takeover is next (rehearse), and the wait itself.

// expiryMargin is how long after the database's expiry of a lease a follower
// tries to take it. Waking at the expiry itself would do on clocks that run
// at one rate; the margin absorbs the database clock's resolution and a
// small rate difference, and is the floor of every wait, so a lease shown
// already expired (but not taken: another acquire raced this one) is tried
// again at once without spinning.
const expiryMargin = 10 * time.Millisecond

// retryIn is how long a follower waits after an acquire that found the lease
// held: AcquireInterval, or less when the lease it was shown expires sooner.
// The store says when it read the lease in database time (Lease.ReadAt), so
// ExpiresAt - ReadAt is the lease's remaining time on any clock, whatever
// the offset between this instance's clock and the database's; the call's
// own duration only makes the follower wake a little after the expiry,
// never before. A leader that renews keeps at least LeaseDuration -
// RenewInterval left, so followers of a live leader still acquire only
// every AcquireInterval (every LeaseDuration - RenewInterval at most, when
// that is shorter); after a crash the first follower to look within
// AcquireInterval of the expiry takes over at the expiry, not up to an
// AcquireInterval later.
func (c Config) retryIn(shown core.Lease) time.Duration {
	if shown.ReadAt.IsZero() {
		return c.AcquireInterval
	}
	left := shown.ExpiresAt.Sub(shown.ReadAt) + expiryMargin
	return min(c.AcquireInterval, max(left, expiryMargin))
}

// rehearse lets a store that can (ports.TakeoverPreparer) warm its
// takeover while the follower waits for the expiry it will try at, so the
// takeover runs warm. It is bounded as an acquire is; one that overruns the
// wait only delays the takeover by what the takeover would have paid.
func (e *Elector) rehearse(ctx context.Context) {
	if e.preparer == nil {
		return
	}
	start := e.cfg.Clock.Now()
	callCtx, cancel := clockctx.WithTimeout(ctx, e.cfg.Clock, e.cfg.LeaseDuration-e.margin)
	err := e.preparer.PrepareTakeover(callCtx, e.cfg.LeaseName)
	cancel()
	if err != nil && ctx.Err() == nil {
		e.log.Debug("leader_takeover_rehearsal_failed", "error", err.Error(), "took", e.cfg.Clock.Now().Sub(start))
	}
}

// sleepUntil waits until at on the clock and reports false if ctx ended
// first.
func (e *Elector) sleepUntil(ctx context.Context, at time.Time) bool {
	timer := e.cfg.Clock.NewTimerAt(at)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C():
		return true
	}
}

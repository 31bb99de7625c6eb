package leader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/submissionmanager/submission-manager/app/clockctx"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// LeadFunc runs the executor for one leadership term. It must return when
// ctx is cancelled (with nil) and should return an error when it sees the
// lease lost (a fenced write that affected no row) or the store failing.
// stillLeader is a cheap local check the executor calls before dequeueing
// and before each attempt; once it returns false it never returns true
// again for this term.
type LeadFunc func(ctx context.Context, lease core.Lease, stillLeader func() bool) error

// Elector runs one instance's side of the leader election. Each term is
// identified by the lease epoch it acquired; the executor of a term is
// started only after the acquire succeeded and is always stopped and waited
// for before the instance tries to acquire again, so at most one executor
// runs per instance, and the lease's fence keeps executors of different
// instances from both writing.
type Elector struct {
	cfg    Config
	margin time.Duration
	log    *slog.Logger
	// preparer is cfg.Leases when that store can rehearse a takeover.
	preparer ports.TakeoverPreparer

	running sync.Mutex // held by Run, so two loops never share one identity

	// tried is closed once Run's first attempt to acquire has returned.
	tried     chan struct{}
	triedOnce sync.Once

	mu sync.Mutex
	// lease is the lease of the current term, or the last holder seen by a
	// failed acquire while following.
	lease core.Lease
	// leading is true from a successful acquire until the term ends.
	leading bool
	// term counts leadership terms, so a stillLeader of an ended term stays
	// false even if this instance leads again later.
	term uint64
	// validUntil is when, on the local monotonic clock, the lease may have
	// expired: the start of the last successful acquire or renew plus the
	// lease duration, minus the safety margin.
	validUntil time.Time
}

var _ ports.LeadershipReporter = (*Elector)(nil)

// New validates cfg, applies the spec's defaults and returns an elector that
// starts as a follower.
func New(cfg Config) (*Elector, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	preparer, _ := cfg.Leases.(ports.TakeoverPreparer)
	return &Elector{
		cfg:      cfg,
		margin:   cfg.safetyMargin(),
		log:      cfg.Logger.With("holder_id", cfg.HolderID, "lease_name", cfg.LeaseName),
		preparer: preparer,
		tried:    make(chan struct{}),
	}, nil
}

// Tried is closed once Run's first attempt to acquire the lease has
// returned, whatever it found: this instance leads, or follows, or the
// store failed. serve waits for it before it warms the query pool, so that
// a fresh instance's first acquire does not share a busy database server
// with that warm-up (on Babelfish twenty compiles at once, which outlasted
// a 5 s lease's acquire and put the leader's start back by the whole
// warm-up).
func (e *Elector) Tried() <-chan struct{} { return e.tried }

// Leadership reports the lease of the current term and whether this instance
// leads now; it is what /readyz shows. A leader whose lease may have expired
// on the local clock (a renewal is overdue) already reports false.
func (e *Elector) Leadership() (core.Lease, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lease, e.leading && e.cfg.Clock.Now().Before(e.validUntil)
}

// Run elects until ctx is cancelled, then stops the executor, releases the
// lease if it holds it, and returns nil. As a follower it tries to acquire at
// once and then every AcquireInterval, or sooner when the lease it was shown
// expires sooner (Config.retryIn); as a leader it runs lead in a
// goroutine it owns and renews every RenewInterval. It returns an error only
// if the elector is already running.
func (e *Elector) Run(ctx context.Context, lead LeadFunc) error {
	if !e.running.TryLock() {
		return errors.New("leader: elector is already running")
	}
	defer e.running.Unlock()
	for {
		lease, ok, retryIn := e.acquire(ctx)
		e.triedOnce.Do(func() { close(e.tried) })
		if ok {
			e.leadTerm(ctx, lease, lead)
			retryIn = e.cfg.AcquireInterval
		}
		if ctx.Err() != nil {
			return nil
		}
		wakeAt := e.cfg.Clock.Now().Add(retryIn)
		if retryIn < e.cfg.AcquireInterval {
			// The next try is at the expiry of the lease just shown.
			e.rehearse(ctx)
		}
		if !e.sleepUntil(ctx, wakeAt) {
			return nil
		}
	}
}

// acquire makes one attempt to take the lease. It reports success only with
// the leadership bookkeeping of the new term already in place; otherwise it
// says how long to wait before the next attempt.
func (e *Elector) acquire(ctx context.Context) (core.Lease, bool, time.Duration) {
	start := e.cfg.Clock.Now()
	callCtx, cancel := clockctx.WithTimeout(ctx, e.cfg.Clock, e.cfg.LeaseDuration-e.margin)
	lease, acquired, err := e.cfg.Leases.Acquire(callCtx, ports.AcquireLeaseParams{
		LeaseName: e.cfg.LeaseName,
		HolderID:  e.cfg.HolderID,
		Duration:  e.cfg.LeaseDuration,
	})
	cancel()
	// took is the acquire's own duration, logged so that a takeover that
	// came late says whether the database call or the wait before it was slow.
	took := e.cfg.Clock.Now().Sub(start)
	switch {
	case ctx.Err() != nil:
		if err == nil && acquired {
			// Shutting down in the same instant: hand the lease straight
			// back rather than leave it to expire with nobody leading.
			releaseCtx, cancel := clockctx.WithTimeout(context.WithoutCancel(ctx), e.cfg.Clock, e.cfg.RenewInterval)
			err := e.cfg.Leases.Release(releaseCtx, lease.Fence())
			cancel()
			e.log.Info("leader_released_unused", "lease_epoch", lease.Epoch, "released", err == nil)
		}
		return core.Lease{}, false, e.cfg.AcquireInterval
	case err != nil:
		e.log.Warn("leader_acquire_failed", "sql_error", err.Error(), "took", took)
		return core.Lease{}, false, e.cfg.AcquireInterval
	case !acquired:
		e.mu.Lock()
		e.lease = lease
		e.mu.Unlock()
		retryIn := e.cfg.retryIn(lease)
		e.log.Debug("leader_acquire_failed", "reason", "held by another instance",
			"leader_holder_id", lease.HolderID, "lease_epoch", lease.Epoch, "expires_at", lease.ExpiresAt,
			"retry_in", retryIn, "took", took)
		return core.Lease{}, false, retryIn
	}
	e.mu.Lock()
	e.lease = lease
	e.leading = true
	e.term++
	e.validUntil = start.Add(e.cfg.LeaseDuration - e.margin)
	e.mu.Unlock()
	e.cfg.Metrics.Leadership(true, lease.Epoch)
	e.log.Info("leader_acquired", "lease_epoch", lease.Epoch, "expires_at", lease.ExpiresAt, "took", took)
	return lease, true, 0
}

// leadTerm runs one leadership term: the executor in a goroutine, renewals
// here. It returns only after the executor returned and leadership was
// dropped.
func (e *Elector) leadTerm(ctx context.Context, lease core.Lease, lead LeadFunc) {
	// The executor's context is cancelled only here, always after drop, so
	// an executor that sees it cancelled already finds stillLeader false.
	leadCtx, stopLead := context.WithCancel(context.WithoutCancel(ctx))
	defer stopLead()
	stillLeader := e.stillLeaderFunc()
	leadDone := make(chan error, 1)
	go func() { leadDone <- lead(leadCtx, lease, stillLeader) }()

	renewStart := e.cfg.Clock.Now()
	for {
		timer := e.cfg.Clock.NewTimer(max(e.cfg.RenewInterval-e.cfg.Clock.Now().Sub(renewStart), 0))
		select {
		case <-ctx.Done():
			timer.Stop()
			e.drop()
			stopLead()
			err := <-leadDone
			e.release(ctx, lease, "shutdown", err)
			return
		case err := <-leadDone:
			timer.Stop()
			e.drop()
			if err == nil {
				err = errors.New("executor returned while leading")
			}
			e.release(ctx, lease, "executor stopped", err)
			return
		case <-timer.C():
		}
		renewStart = e.cfg.Clock.Now()
		renewed, err := e.renew(ctx, lease, renewStart)
		if err != nil {
			if ctx.Err() != nil {
				continue // shutdown: the select above stops and releases
			}
			e.drop()
			stopLead()
			leadErr := <-leadDone
			if errors.Is(err, core.ErrFenced) {
				e.lost(lease, "renew fenced", err, leadErr)
				return
			}
			// The row may still be ours (a slow or failed statement says
			// nothing about it): release it so a follower need not wait.
			e.release(ctx, lease, "renew failed", errors.Join(err, leadErr))
			return
		}
		lease = renewed
	}
}

// renew extends the lease, bounded by the time the lease is still valid on
// the local clock: a renewal that cannot finish before then could not keep
// leadership anyway.
func (e *Elector) renew(ctx context.Context, lease core.Lease, start time.Time) (core.Lease, error) {
	e.mu.Lock()
	remaining := e.validUntil.Sub(start)
	e.mu.Unlock()
	if remaining <= 0 {
		err := fmt.Errorf("lease may have expired %s ago on the local clock before it was renewed", -remaining)
		e.log.Warn("leader_renew_failed", "lease_epoch", lease.Epoch, "expires_at", lease.ExpiresAt, "error", err.Error())
		return core.Lease{}, err
	}
	callCtx, cancel := clockctx.WithTimeout(ctx, e.cfg.Clock, remaining)
	renewed, err := e.cfg.Leases.Renew(callCtx, ports.RenewLeaseParams{Fence: lease.Fence(), Duration: e.cfg.LeaseDuration})
	cancel()
	if err != nil {
		e.log.Warn("leader_renew_failed", "lease_epoch", lease.Epoch, "expires_at", lease.ExpiresAt, "sql_error", err.Error())
		return core.Lease{}, err
	}
	e.mu.Lock()
	e.lease = renewed
	e.validUntil = start.Add(e.cfg.LeaseDuration - e.margin)
	e.mu.Unlock()
	e.log.Info("leader_renewed", "lease_epoch", renewed.Epoch, "expires_at", renewed.ExpiresAt)
	return renewed, nil
}

// stillLeaderFunc returns the executor's leadership check for the term that
// just started. It is false once the term ended or once the lease may have
// expired on the local monotonic clock, so a process that was paused past
// its lease stops before its next write is even attempted.
func (e *Elector) stillLeaderFunc() func() bool {
	e.mu.Lock()
	term := e.term
	e.mu.Unlock()
	return func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.leading && e.term == term && e.cfg.Clock.Now().Before(e.validUntil)
	}
}

// drop ends the term locally, before the executor is even told, so that its
// next stillLeader check already fails.
func (e *Elector) drop() {
	e.mu.Lock()
	e.leading = false
	epoch := e.lease.Epoch
	e.mu.Unlock()
	e.cfg.Metrics.Leadership(false, epoch)
}

// release expires the lease, fenced by the term's epoch, so a follower takes
// over at its next acquire tick instead of after the full lease duration. It
// runs after the executor returned, so no in-flight attempt of this term
// overlaps the successor's. It is bounded by one renew interval and outlives
// ctx, because it is most useful exactly when ctx was cancelled.
func (e *Elector) release(ctx context.Context, lease core.Lease, reason string, cause error) {
	callCtx, cancel := clockctx.WithTimeout(context.WithoutCancel(ctx), e.cfg.Clock, e.cfg.RenewInterval)
	err := e.cfg.Leases.Release(callCtx, lease.Fence())
	cancel()
	attrs := []any{"reason", reason, "lease_epoch", lease.Epoch, "expires_at", lease.ExpiresAt, "released", err == nil}
	if cause != nil {
		attrs = append(attrs, "error", cause.Error())
	}
	if err != nil && !errors.Is(err, core.ErrFenced) {
		attrs = append(attrs, "sql_error", err.Error())
	}
	if reason == "shutdown" && cause == nil {
		e.log.Info("leader_lost", attrs...)
		return
	}
	e.log.Warn("leader_lost", attrs...)
}

// lost logs the end of a term whose lease is known to be held elsewhere, so
// there is nothing to release.
func (e *Elector) lost(lease core.Lease, reason string, err, leadErr error) {
	attrs := []any{"reason", reason, "lease_epoch", lease.Epoch, "expires_at", lease.ExpiresAt, "sql_error", err.Error()}
	if leadErr != nil {
		attrs = append(attrs, "error", leadErr.Error())
	}
	e.log.Warn("leader_lost", attrs...)
}

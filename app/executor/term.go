package executor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/submissionmanager/submission-manager/app/protection"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// maxNotifyBatch bounds how many notifications one wake-up takes, so a burst
// of submissions cannot starve completions and timers.
const maxNotifyBatch = 256

// Bounds of the known-intent cache: how many intents, and how many payload
// bytes, the scheduler keeps in memory to spare a store read per attempt.
// Beyond them an attempt simply reads the intent from the store.
const (
	maxKnownIntents      = 8192
	maxKnownPayloadBytes = 32 << 20
)

// term is one leadership term of the executor: the schedule and the attempts
// in flight under one lease epoch. Every field except done, released and
// the shared gates and slots is owned by the scheduler goroutine (the one
// running run); workers talk to it only by sending their result on done
// and their claim on released.
type term struct {
	e           *Executor
	cfg         Config
	lease       core.Lease
	fence       core.Fence
	stillLeader func() bool
	log         *slog.Logger
	// debug says the logger takes debug records: the two per attempt are
	// built only then (their arguments cost allocations on every attempt).
	debug bool

	schedule *core.Schedule
	// inFlight holds every intent with a worker, until its result is
	// received: never two attempts of one intent at once.
	inFlight map[string]*worker
	// claims counts the workers between their dispatch and the end of
	// their gateway call; slots hands out the call slots (what MaxInFlight
	// bounds) to them in dispatch order (slots.go). A worker gives its slot
	// back as soon as the gateway answered and its claim on released: a
	// result is recorded outside both, so the next call does not wait for
	// this one's write.
	claims   int
	slots    *slots
	released chan *worker
	// gates are the term's gateway protection (app/protection), parking
	// the attempts that wait for room at their gateway (parking.go).
	gates   *protection.Gates
	parking parking
	// known caches the state of intents this term just created (Notify) or
	// wrote (a retry), so their next attempt needs no store read. It is only
	// an optimisation: StartAttempt is conditional on the attempt count, and
	// an attempt whose cached state turns out stale re-reads the store.
	known      map[string]core.Intent
	knownBytes int
	// loading names the intents of the load under way (nil when none),
	// unloadable those a load found the cache cannot hold, sinceLoad counts
	// dispatches since the last look ahead, and due is prefetch's scratch
	// list (prefetch.go).
	loading    map[string]bool
	loaded     chan loadResult
	unloadable map[string]struct{}
	sinceLoad  int
	due        []string
	cursor     ports.ChangeCursor
	// nextRefresh is when the next ListChanged is due, on the executor's clock.
	nextRefresh time.Time
	// done receives one result per worker. Its capacity (like released's)
	// is maxWorkers and a worker counts as in flight until its result is
	// received, so a worker's sends never block.
	done    chan result
	workers sync.WaitGroup
	// jobs hands attempts to idle workers (spawn); run closes it once no
	// attempt is in flight, which lets the workers end.
	jobs chan func()
	// stopWork cancels the context of every worker of this term.
	stopWork context.CancelFunc
	// writes batch the workers' fenced reservations and results
	// (writes.go).
	writes writers
	// lost is the first sign that leadership is gone; once set, nothing new
	// is dispatched and run returns it.
	lost error

	reportedSchedule, reportedInFlight int
}

// result is what a worker tells the scheduler when its attempt is over.
type result struct {
	intentID string
	// next, when set, is the intent's next due time; nil forgets the intent
	// (terminal, gone, or not runnable here).
	next *core.ScheduleEntry
	// known, with next, is the intent's state after the attempt, for the
	// known-intent cache.
	known *core.Intent
	// err means leadership is lost: a fenced write or a store failure.
	err error
	// park, with next, asks to wait for room at this gateway URL;
	// released names the gateway URL an admitted attempt freed room at.
	park, released string
}

func newTerm(e *Executor, lease core.Lease, stillLeader func() bool, gates *protection.Gates) *term {
	return &term{
		e:                e,
		cfg:              e.cfg,
		lease:            lease,
		fence:            lease.Fence(),
		stillLeader:      stillLeader,
		log:              e.log.With("lease_epoch", lease.Epoch, "holder_id", lease.HolderID),
		debug:            e.log.Enabled(context.Background(), slog.LevelDebug),
		schedule:         core.NewSchedule(),
		inFlight:         make(map[string]*worker),
		gates:            gates,
		parking:          parking{},
		known:            make(map[string]core.Intent),
		loaded:           make(chan loadResult, 1),
		unloadable:       make(map[string]struct{}),
		done:             make(chan result, maxWorkers(e.cfg)),
		jobs:             make(chan func()),
		slots:            newSlots(e.cfg.MaxInFlight),
		released:         make(chan *worker, maxWorkers(e.cfg)),
		reportedSchedule: -1,
		reportedInFlight: -1,
	}
}

// errNotLeader builds the error for a failed local leadership check. It
// wraps core.ErrFenced because the elector treats both alike: the lease is
// no longer known to be ours.
func errNotLeader(when string) error {
	return fmt.Errorf("executor: leadership check failed %s: %w", when, core.ErrFenced)
}

// run is the scheduler goroutine's loop: rebuild, then refresh, dispatch and
// wait until ctx ends or leadership is lost; then stop and wait for every
// worker.
func (t *term) run(ctx context.Context) error {
	// Workers are not cancelled with ctx: a shutdown first drains them.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	t.stopWork = stopWork

	if err := t.start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		t.stepDown(fmt.Errorf("executor: schedule rebuild: %w", err), "")
		return t.lost
	}
	if !t.stillLeader() {
		t.stepDown(errNotLeader("after the schedule rebuild"), "")
		return t.lost
	}
	t.writes = newWriters(workCtx, t.cfg)
	stopWrites := t.writes.start()
	t.log.Info("executor_started", "schedule_size", t.schedule.Len())
	t.nextRefresh = t.cfg.Clock.Now().Add(t.cfg.RefreshInterval)
	for t.lost == nil {
		if !t.cfg.Clock.Now().Before(t.nextRefresh) {
			if err := t.refresh(ctx); err != nil {
				if ctx.Err() == nil {
					t.stepDown(fmt.Errorf("executor: schedule refresh: %w", err), "")
				}
				break
			}
			t.nextRefresh = t.cfg.Clock.Now().Add(t.cfg.RefreshInterval)
			t.afterRefresh(ctx)
		}
		t.dispatch(workCtx)
		if t.lost != nil {
			break
		}
		t.report()
		if !t.wait(ctx) {
			break
		}
	}
	if t.lost == nil {
		t.drain()
	}
	stopWork()
	for len(t.inFlight) > 0 {
		select {
		case r := <-t.done:
			t.collect(r)
		case w := <-t.released: // a full released must never block a worker
			t.unclaim(w)
		}
	}
	close(t.jobs)
	t.workers.Wait()
	stopWrites()
	t.report()
	t.cfg.Metrics.ScheduleSize(0)
	if t.lost != nil {
		t.log.Warn("executor_stopped", "reason", "leadership lost", "error", t.lost.Error())
	} else {
		t.log.Info("executor_stopped", "reason", "shutdown")
	}
	return t.lost
}

// drain waits, at shutdown, up to DrainTimeout for the attempts in flight,
// so gateway calls already made can finish and be recorded instead of being
// cut short with their outcome unknown. Nothing new is dispatched meanwhile.
func (t *term) drain() {
	t.slots.stop()
	if len(t.inFlight) == 0 {
		return
	}
	t.log.Info("executor_draining", "in_flight", len(t.inFlight), "timeout", t.cfg.DrainTimeout)
	timer := t.cfg.Clock.NewTimer(t.cfg.DrainTimeout)
	defer timer.Stop()
	for len(t.inFlight) > 0 && t.lost == nil {
		select {
		case r := <-t.done:
			t.collect(r)
		case w := <-t.released:
			t.unclaim(w)
		case <-timer.C():
			return
		}
	}
}

// stepDown records the first sign of lost leadership and cancels every
// worker, so no new attempt starts and gateway calls under way are cut
// short. intentID names the intent whose attempt saw it, if any.
func (t *term) stepDown(err error, intentID string) {
	attrs := []any{"error", err.Error()}
	if intentID != "" {
		attrs = append(attrs, "intent_id", intentID)
	}
	if t.lost != nil {
		t.log.Warn("executor_error_after_loss", attrs...)
		return
	}
	t.lost = err
	t.log.Error("leader_executor_lost", attrs...)
	t.slots.stop()
	if t.stopWork != nil {
		t.stopWork()
	}
}

// wait blocks until something may have changed what to do: ctx ending, a
// notification, a worker's result, the head of the schedule falling due, or
// the refresh falling due. It reports false when ctx ended. The timers live
// only while waiting, so the set of pending timers shows what the scheduler
// waits for.
func (t *term) wait(ctx context.Context) bool {
	// Armed at the times themselves: a clock reading of ours in between
	// would leave a timer late by however far the clock moved meanwhile.
	refresh := t.cfg.Clock.NewTimerAt(t.nextRefresh)
	defer refresh.Stop()
	var due <-chan time.Time
	if t.claims < maxClaims(t.cfg) && len(t.inFlight) < maxWorkers(t.cfg) {
		// A head whose state is being loaded waits for the load, not a timer.
		if head, ok := t.schedule.Peek(); ok && !t.loading[head.IntentID] {
			timer := t.cfg.Clock.NewTimerAt(head.DueAt)
			defer timer.Stop()
			due = timer.C()
		}
	}
	select {
	case <-ctx.Done():
		return false
	case i := <-t.e.notify:
		t.noteIntent(i)
		for range maxNotifyBatch {
			select {
			case i := <-t.e.notify:
				t.noteIntent(i)
			default:
				return true
			}
		}
	case r := <-t.done:
		t.collect(r)
	case w := <-t.released:
		t.unclaim(w)
	case l := <-t.loaded:
		t.applyLoad(l)
	case <-due:
	case <-refresh.C():
	}
	return true
}

// report publishes the schedule size and in-flight count when they changed.
func (t *term) report() {
	if n := t.schedule.Len(); n != t.reportedSchedule {
		t.reportedSchedule = n
		t.cfg.Metrics.ScheduleSize(n)
	}
	if n := len(t.inFlight); n != t.reportedInFlight {
		t.reportedInFlight = n
		t.cfg.Metrics.InFlightAttempts(n)
	}
}

// isStopping reports whether an error came from the term being stopped
// rather than from the store: the worker's context was cancelled.
func isStopping(ctx context.Context, err error) bool {
	return ctx.Err() != nil && !errors.Is(err, core.ErrFenced)
}

// Package executor drives intents to a terminal status while this instance
// holds the leader lease. Each leadership term keeps the schedule of pending
// intents (rebuilt from the store, followed by its change cursor, fed by
// local submissions) in one goroutine that owns it, and runs every due
// attempt through one pipeline: load → admit → reserve → call → decide →
// record, every execution write fenced by the lease epoch. It is pure Go
// over the ports, so it is tested with a fake clock, an in-memory store and
// scripted gateways.
package executor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/submissionmanager/submission-manager/app/protection"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Defaults applied by New to zero-valued Config fields.
const (
	// DefaultMaxInFlight bounds concurrent gateway calls so one slow gateway
	// delays at most this many attempts instead of all traffic. Throughput is
	// about MaxInFlight / gateway latency: 64 carries ~1,300 attempts/s to a
	// 50 ms gateway, and matches the gateway client's connection bound.
	DefaultMaxInFlight = 64
	// DefaultRefreshInterval is the spec's schedule_refresh_interval.
	DefaultRefreshInterval = time.Second
	// DefaultRefreshPageSize and DefaultRebuildPageSize bound one store read.
	DefaultRefreshPageSize = 500
	DefaultRebuildPageSize = 1000
	// DefaultWriteBatches is how many fenced batches of one kind a term
	// has under way at once unless the store states otherwise.
	DefaultWriteBatches = 4
	// DefaultFinishTimeout bounds the write that records an attempt's result
	// after the executor was told to stop.
	DefaultFinishTimeout = 10 * time.Second
	// DefaultDrainTimeout lets calls in flight at shutdown finish for as
	// long as a gateway call may take by default.
	DefaultDrainTimeout = 10 * time.Second
	// notifyBuffer is how many local submissions may wait for the scheduler;
	// beyond it a notification is dropped and the next refresh finds the
	// intent instead, so Notify never blocks a request.
	notifyBuffer = 4096
)

// NoReserveAhead, as Config.ReserveAhead, reserves no attempt ahead of a free
// call slot.
const NoReserveAhead = -1

// Config wires an Executor. Store, Clock and at least one gateway are required.
type Config struct {
	// Store holds the intents; its execution writes are fenced.
	Store ports.Store
	// Gateways maps each gateway type to its client. An intent whose
	// contract names a type missing here gets attempts that fail with an
	// error saying so, and is retried under its policy.
	Gateways map[core.GatewayType]ports.Gateway
	// Clock is the executor's time: due times, attempt timestamps, timers.
	Clock ports.Clock
	// Retry proposes the delay before the next attempt; nil means
	// core.FixedDelay(core.DefaultRetryDelay).
	Retry core.RetryPolicy
	// MaxInFlight bounds concurrent gateway calls: an attempt holds a slot
	// from the moment its reservation is durable until the gateway
	// answered, and records its result outside it (at most as many again
	// are recording).
	MaxInFlight int
	// ReserveAhead bounds the attempts reserved ahead of a free call slot
	// (slots.go): with it, the next calls' reservations are made durable
	// while the current calls run, so a reservation's commit is not part of
	// every call's cycle. Its cost shows only when a leader dies: the
	// attempts it had reserved ahead but not called are found open, like
	// calls cut short, and resolved the same way (lookup, or outcome
	// unknown). Zero means MaxInFlight; NoReserveAhead reserves an attempt
	// only once a slot is free.
	ReserveAhead int
	// RefreshInterval is how often the leader reads intents changed by
	// other instances.
	RefreshInterval time.Duration
	// RefreshLookback makes every refresh re-read changes this far behind
	// the cursor. The composite cursor alone skips a change whose
	// last_modified_at was taken before the cursor passed it but whose
	// transaction committed after the read: impossible on SQLite, whose one
	// writer commits in timestamp order, but possible on SQL Server, where
	// concurrent transactions commit in any order. Re-reading is harmless
	// (refresh is idempotent); the window must exceed the longest time
	// between a write's timestamp and its commit. Zero takes the store's
	// stated fact (ports.StoreFacts.ChangeLookback), so no caller has to
	// know which store needs it.
	RefreshLookback time.Duration
	// RefreshPageSize and RebuildPageSize are the page sizes of ListChanged
	// and ListPending.
	RefreshPageSize, RebuildPageSize int
	// WriteBatches is how many fenced batches of one kind the term has
	// under way at once (writes.go). Zero takes the store's stated fact
	// (ports.StoreFacts.WriteBatches), else DefaultWriteBatches.
	WriteBatches int
	// FinishTimeout bounds a result's write (and a deferral's) once the
	// term is stopping; while it runs, the fence bounds them.
	FinishTimeout time.Duration
	// DrainTimeout is how long a shutdown (Lead's context cancelled) lets
	// the gateway calls in flight finish before it cancels them. A call cut
	// short leaves the gateway's answer unknown and its retry may meet
	// duplicate_reference, so a rolling restart should let calls finish.
	// Leadership loss cancels them at once: the lease may be another's.
	DrainTimeout time.Duration
	// Logger receives attempt and leadership events; nil means slog.Default().
	Logger *slog.Logger
	// Metrics receives attempt events; nil means none.
	Metrics ports.Metrics
	// Tracer makes each attempt's spans (reservation, gateway call,
	// result) under the trace context its intent keeps; nil means
	// ports.NopTracer, which still sends the intent's traceparent to the
	// gateway.
	Tracer ports.Tracer
	// Protection is the gateway protection: retry policies, breakers,
	// limits and pauses (app/protection). The zero value protects nothing.
	Protection protection.Config
}

// Executor executes attempts while this instance leads. Create it once per
// process with New; the leader elector calls Lead for each leadership term,
// and the intake service calls Notify for each new local intent.
type Executor struct {
	cfg Config
	log *slog.Logger

	// running guards against two concurrent Lead calls.
	running atomic.Bool
	// leading is true while Lead accepts notifications.
	leading atomic.Bool
	// notify carries locally created intents to the scheduler goroutine.
	notify chan core.Intent
	// gates is the current (or last) term's gateway protection.
	gates atomic.Pointer[protection.Gates]
}

// New validates cfg and applies the defaults.
func New(cfg Config) (*Executor, error) {
	var errs []error
	if cfg.Store == nil {
		errs = append(errs, errors.New("executor: Config.Store is required"))
	}
	if cfg.Clock == nil {
		errs = append(errs, errors.New("executor: Config.Clock is required"))
	}
	if len(cfg.Gateways) == 0 {
		errs = append(errs, errors.New("executor: Config.Gateways needs at least one gateway"))
	}
	for t, g := range cfg.Gateways {
		if g == nil {
			errs = append(errs, fmt.Errorf("executor: Config.Gateways[%q] is nil", t))
		}
	}
	if cfg.ReserveAhead < NoReserveAhead {
		errs = append(errs, fmt.Errorf("executor: Config.ReserveAhead %d: want a count, 0 for MaxInFlight or NoReserveAhead", cfg.ReserveAhead))
	}
	if cfg.MaxInFlight < 0 || cfg.RefreshInterval < 0 || cfg.RefreshLookback < 0 || cfg.RefreshPageSize < 0 ||
		cfg.RebuildPageSize < 0 || cfg.WriteBatches < 0 || cfg.FinishTimeout < 0 || cfg.DrainTimeout < 0 {
		errs = append(errs, errors.New("executor: Config sizes and durations must not be negative"))
	}
	if err := cfg.Protection.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("executor: Config.Protection: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	cfg.Retry = cmp.Or[core.RetryPolicy](cfg.Retry, core.FixedDelay(core.DefaultRetryDelay))
	cfg.MaxInFlight = cmp.Or(cfg.MaxInFlight, DefaultMaxInFlight)
	switch cfg.ReserveAhead {
	case 0:
		cfg.ReserveAhead = cfg.MaxInFlight
	case NoReserveAhead:
		cfg.ReserveAhead = 0
	}
	cfg.RefreshInterval = cmp.Or(cfg.RefreshInterval, DefaultRefreshInterval)
	cfg.RefreshLookback = cmp.Or(cfg.RefreshLookback, cfg.Store.Facts().ChangeLookback)
	cfg.WriteBatches = cmp.Or(cfg.WriteBatches, cfg.Store.Facts().WriteBatches, DefaultWriteBatches)
	cfg.RefreshPageSize = cmp.Or(cfg.RefreshPageSize, DefaultRefreshPageSize)
	cfg.RebuildPageSize = cmp.Or(cfg.RebuildPageSize, DefaultRebuildPageSize)
	cfg.FinishTimeout = cmp.Or(cfg.FinishTimeout, DefaultFinishTimeout)
	cfg.DrainTimeout = cmp.Or(cfg.DrainTimeout, DefaultDrainTimeout)
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	cfg.Tracer = cmp.Or[ports.Tracer](cfg.Tracer, ports.NopTracer{})
	cfg.Metrics = cmp.Or[ports.Metrics](cfg.Metrics, ports.NopMetrics{})
	return &Executor{cfg: cfg, log: cfg.Logger, notify: make(chan core.Intent, notifyBuffer)}, nil
}

// Notify tells the leader that an intent was just created here, so its first
// attempt runs at once instead of at the next refresh. It is safe from any
// goroutine and never blocks: while this instance does not lead, or when the
// scheduler is far behind, the notification is dropped, and the intent is
// found by the leader's refresh or rebuild, which read the store.
func (e *Executor) Notify(i core.Intent) {
	if !e.leading.Load() || i.Status.Terminal() {
		return
	}
	select {
	case e.notify <- i:
	default:
		e.log.Debug("notify_dropped", "intent_id", i.IntentID, "reason", "scheduler backlog")
	}
}

// Lead runs the executor as leader under lease until ctx is cancelled or
// leadership is lost. stillLeader is the elector's local leadership check;
// Lead makes it before dequeueing and before each attempt. Lead returns nil
// when ctx is cancelled, and an error wrapping core.ErrFenced, or the store's
// error, when it lost leadership (also when the loss showed only in a write
// made while stopping). It returns only after every goroutine it started has
// stopped; an attempt whose gateway call was under way is cancelled, and its
// result (often the cancellation error) is still written, through the
// fence, before Lead returns. Gateways must therefore honour ctx.
func (e *Executor) Lead(ctx context.Context, lease core.Lease, stillLeader func() bool) error {
	if !e.running.CompareAndSwap(false, true) {
		return errors.New("executor: Lead is already running")
	}
	defer e.running.Store(false)
	// Notifications left from an earlier term are stale; the rebuild below
	// reads everything they could have said.
	for len(e.notify) > 0 {
		<-e.notify
	}
	e.leading.Store(true)
	defer e.leading.Store(false)
	// Breakers start closed with each new leader; the operator's view
	// reads this term's gates.
	g := protection.NewGates(e.cfg.Protection, e.log, e.cfg.Metrics)
	e.gates.Store(g)
	return newTerm(e, lease, stillLeader, g).run(ctx)
}

// GatewayStatus returns the current term's view of every gateway it has
// called or deferred, and false when this instance does not lead. It is
// what protection.GatewayService shows operators.
func (e *Executor) GatewayStatus() ([]ports.GatewayStatus, bool) {
	g := e.gates.Load()
	if g == nil || !e.leading.Load() {
		return nil, false
	}
	return g.Status(), true
}

var _ protection.Executing = (*Executor)(nil)

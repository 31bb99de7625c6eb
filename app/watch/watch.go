// Package watch lets requests wait until an intent is final. One Watcher per
// instance follows the store's change cursor (last_modified_at, intent_id),
// as the leader's refresh does, and wakes the requests waiting for an intent
// that it sees become terminal. It works the same on a leader, a follower
// and an API-only instance, because it learns of changes only from the
// store, and it costs one change query per interval however many requests
// wait: no request polls on its own.
package watch

import (
	"cmp"
	"context"
	"errors"
	"github.com/submissionmanager/submission-manager/app/changes"
	"log/slog"
	"sync"
	"time"

	"github.com/submissionmanager/submission-manager/ports"
)

// Defaults for the zero values of Config.
const (
	// DefaultInterval is how often the watcher reads the changes: the worst
	// added latency between a terminal write and a waiter's answer.
	DefaultInterval = 100 * time.Millisecond
	// DefaultMaxWaiters bounds the requests waiting at once per instance.
	DefaultMaxWaiters = 10_000
	// DefaultMaxWait caps the wait a client may ask for.
	DefaultMaxWait = 30 * time.Second
	// DefaultPageSize is the ListChanged page size.
	DefaultPageSize = 1000
)

// ChangeFeed is what the watcher reads of the store.
type ChangeFeed interface {
	Facts() ports.StoreFacts
	ListChanged(ctx context.Context, p ports.ListChangedParams) ([]ports.ScheduleRow, error)
	LatestChange(ctx context.Context) (ports.ChangeCursor, error)
}

// Config wires a Watcher. Store, Reader and Clock are required.
type Config struct {
	// Store is read for changes only.
	Store ChangeFeed
	// Reader reads an intent again for AwaitFinal, as the request answers
	// it (the intake service, which adds the resubmission links).
	Reader IntentReader
	Clock  ports.Clock
	// Interval is the time between change reads; 0 means DefaultInterval.
	Interval time.Duration
	// Lookback re-reads changes this far behind the cursor, for stores whose
	// commits can become visible out of change-marker order; 0 means the
	// store's stated ChangeLookback.
	Lookback time.Duration
	// MaxWaiters bounds concurrent waiters; 0 means DefaultMaxWaiters.
	MaxWaiters int
	// PageSize is the ListChanged page size; 0 means DefaultPageSize.
	PageSize int
	// Logger receives read failures; nil means slog.Default().
	Logger *slog.Logger
}

// Watcher wakes waiters when their intent becomes terminal. Run is its one
// goroutine, owned by whoever starts it; Close (or the end of Run) answers
// every waiter at once and refuses new ones.
type Watcher struct {
	cfg  Config
	feed ChangeFeed
	log  *slog.Logger

	mu      sync.Mutex
	waiters map[string]map[*Waiter]struct{}
	count   int
	// registrations counts Register calls, so that the cursor may jump to
	// the latest change only when no waiter registered meanwhile.
	registrations uint64
	// ready is set once Run placed the cursor; until then Register refuses,
	// because a change before the first read could otherwise be missed.
	ready   bool
	closed  bool
	closing chan struct{}

	// cursor is read and written by Run only.
	cursor ports.ChangeCursor
}

// New validates cfg and applies the defaults.
func New(cfg Config) (*Watcher, error) {
	var errs []error
	if cfg.Store == nil {
		errs = append(errs, errors.New("watch: Config.Store is required"))
	}
	if cfg.Reader == nil {
		errs = append(errs, errors.New("watch: Config.Reader is required"))
	}
	if cfg.Clock == nil {
		errs = append(errs, errors.New("watch: Config.Clock is required"))
	}
	if cfg.Interval < 0 || cfg.Lookback < 0 || cfg.MaxWaiters < 0 || cfg.PageSize < 0 {
		errs = append(errs, errors.New("watch: Config durations and sizes must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	cfg.Interval = cmp.Or(cfg.Interval, DefaultInterval)
	cfg.Lookback = cmp.Or(cfg.Lookback, cfg.Store.Facts().ChangeLookback)
	cfg.MaxWaiters = cmp.Or(cfg.MaxWaiters, DefaultMaxWaiters)
	cfg.PageSize = cmp.Or(cfg.PageSize, DefaultPageSize)
	return &Watcher{
		cfg:     cfg,
		feed:    cfg.Store,
		log:     cmp.Or(cfg.Logger, slog.Default()),
		waiters: make(map[string]map[*Waiter]struct{}),
		closing: make(chan struct{}),
	}, nil
}

// Waiter is one request waiting for one intent. Its owner calls Wait at
// most once and Done always.
type Waiter struct {
	w        *Watcher
	intentID string
	woken    chan struct{}
	once     sync.Once
}

// Register adds a waiter for intentID. It returns false when the watcher is
// over its waiter cap, not yet following the store, or closed: the caller
// then answers at once. Register before the read that decides whether to
// wait, so that a change committed after that read cannot be missed (as
// AwaitFinal does).
func (w *Watcher) Register(intentID string) (*Waiter, bool) { return w.register(intentID) }

var _ ports.FinalWaiter = (*Watcher)(nil)

func (w *Watcher) register(intentID string) (*Waiter, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.ready || w.closed || w.count >= w.cfg.MaxWaiters {
		return nil, false
	}
	wt := &Waiter{w: w, intentID: intentID, woken: make(chan struct{})}
	set := w.waiters[intentID]
	if set == nil {
		set = make(map[*Waiter]struct{}, 1)
		w.waiters[intentID] = set
	}
	set[wt] = struct{}{}
	w.count++
	w.registrations++
	return wt, true
}

// Waiters returns how many requests wait now.
func (w *Watcher) Waiters() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.count
}

// Wait blocks until the intent was seen terminal, d has passed on the
// watcher's clock, ctx ends, or the watcher closes, whichever is first.
func (wt *Waiter) Wait(ctx context.Context, d time.Duration) {
	timer := wt.w.cfg.Clock.NewTimer(d)
	defer timer.Stop()
	select {
	case <-wt.woken:
	case <-timer.C():
	case <-ctx.Done():
	case <-wt.w.closing:
	}
}

// Done removes the waiter. It is safe to call more than once.
func (wt *Waiter) Done() {
	wt.once.Do(func() {
		w := wt.w
		w.mu.Lock()
		defer w.mu.Unlock()
		if set, ok := w.waiters[wt.intentID]; ok {
			if _, ok := set[wt]; ok {
				delete(set, wt)
				w.count--
			}
			if len(set) == 0 {
				delete(w.waiters, wt.intentID)
			}
		}
	})
}

// Close answers every waiter now and refuses new ones. A server calls it
// before draining HTTP requests, so that waiting requests answer with the
// intent as it stands instead of holding the shutdown. Safe to call more
// than once and concurrently with Run.
func (w *Watcher) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.closing)
	}
}

// Run follows the change cursor until ctx ends, then closes the watcher.
// A failed read is logged and retried at the next interval: waiters then
// answer when their wait runs out, never with an error.
//
// Prime, when called before it, has placed the cursor already.
func (w *Watcher) Run(ctx context.Context) error {
	defer w.Close()
	for {
		if err := w.poll(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("wait_watch_failed", "error", err.Error())
		}
		timer := w.cfg.Clock.NewTimer(w.cfg.Interval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-w.closing:
			timer.Stop()
			return nil
		case <-timer.C():
		}
	}
}

// Prime places the cursor once, before the instance takes requests, so
// that a request asking to wait is not refused for coming before Run's
// first read (a first read on a new connection can take a while: on
// Babelfish, the statement's first planning there). It must be called
// before Run starts, by whoever starts it; a failure leaves the placing to
// Run, and waits are refused until then, as without it.
func (w *Watcher) Prime(ctx context.Context) error { return w.poll(ctx) }

// poll advances the cursor once. With nobody waiting it only jumps the
// cursor to the latest change (one cheap read), unless a waiter registered
// while that read ran; with waiters it pages through the changes and wakes
// the waiters of every intent it sees terminal.
func (w *Watcher) poll(ctx context.Context) error {
	w.mu.Lock()
	ready, idle, regs := w.ready, w.count == 0, w.registrations
	w.mu.Unlock()
	if !idle {
		return w.follow(ctx)
	}
	latest, err := w.feed.LatestChange(ctx)
	if err != nil {
		return err
	}
	w.mu.Lock()
	jump := w.registrations == regs
	w.ready = true
	w.mu.Unlock()
	if !jump && ready {
		return w.follow(ctx)
	}
	// Nobody waits, or this is the first read (nobody could register
	// before it): changes up to latest concern nobody.
	if changes.After(latest, w.cursor) {
		w.cursor = latest
	}
	return nil
}

// follow pages through the changes after the cursor (from Lookback behind
// it) and wakes the waiters of terminal intents.
func (w *Watcher) follow(ctx context.Context) error {
	return changes.Follow(ctx, w.feed, &w.cursor, w.cfg.Lookback, w.cfg.PageSize, func(r ports.ScheduleRow) {
		if r.Status.Terminal() {
			w.wake(r.IntentID)
		}
	})
}

// wake releases every waiter of intentID; they stay registered until their
// owners call Done.
func (w *Watcher) wake(intentID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for wt := range w.waiters[intentID] {
		select {
		case <-wt.woken:
		default:
			close(wt.woken)
		}
	}
}

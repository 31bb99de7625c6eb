package leader_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/leader"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// The timings of the unit tests. The safety margin is min(D/10, (D-R)/2),
// so a lease acquired or renewed at t is locally valid until t+9s.
const (
	leaseDuration = 10 * time.Second
	renewInterval = 3 * time.Second
	localValidity = 9 * time.Second
)

var t0 = time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)

// waitBound bounds every wait of a test in real time. It is not a timing
// assertion: the fake clock decides what happens, this only keeps a broken
// elector from hanging the suite.
const waitBound = 10 * time.Second

// world is one fake database (a memstore whose clock plays database time)
// shared by any number of electors, with their logs and metrics.
type world struct {
	t       *testing.T
	clock   *clocktest.Clock
	store   *memstore.Store
	logs    *logBuffer
	metrics *leadershipMetrics
}

func newWorld(t *testing.T) *world {
	clock := clocktest.New(t0)
	return &world{t: t, clock: clock, store: memstore.New(clock), logs: &logBuffer{}, metrics: &leadershipMetrics{}}
}

// config returns an elector config on the world's store with the test
// timings and the given acquire interval.
func (w *world) config(holderID string, acquireInterval time.Duration) leader.Config {
	return leader.Config{
		Leases:          w.store,
		Clock:           w.clock,
		HolderID:        holderID,
		LeaseDuration:   leaseDuration,
		RenewInterval:   renewInterval,
		AcquireInterval: acquireInterval,
		Logger:          slog.New(slog.NewJSONHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Metrics:         w.metrics,
	}
}

// start runs an elector built from cfg until the test ends, and returns it
// with the executor it drives.
func (w *world) start(cfg leader.Config) (*leader.Elector, *executor) {
	w.t.Helper()
	e, err := leader.New(cfg)
	if err != nil {
		w.t.Fatalf("leader.New: %v", err)
	}
	x := &executor{t: w.t, calls: make(chan *leadCall, 16)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx, x.lead) }()
	w.t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				w.t.Errorf("Run returned %v after cancel, want nil", err)
			}
		case <-time.After(waitBound):
			w.t.Errorf("Run did not return within %s of cancel", waitBound)
		}
	})
	return e, x
}

// waitTimer waits until some elector armed a timer for exactly at, which
// proves it finished everything it does before arming it.
func (w *world) waitTimer(at time.Time) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	if err := w.clock.WaitForTimer(ctx, at); err != nil {
		w.t.Fatalf("no timer armed for %s (pending %v): %v", at.Sub(t0), w.clock.Timers(), err)
	}
}

// waitTimers waits until the pending timers are exactly want (in any
// order): every elector armed its next timer and none is inside a lease
// call.
func (w *world) waitTimers(want []time.Time) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	if err := w.clock.WaitForTimers(ctx, want...); err != nil {
		w.t.Fatalf("pending timers %v, want %v: %v", w.clock.Timers(), slices.SortedFunc(slices.Values(want), time.Time.Compare), err)
	}
}

// lease reads the lease row.
func (w *world) lease() core.Lease {
	w.t.Helper()
	l, ok, err := w.store.Read(context.Background(), core.DefaultLeaseName)
	if err != nil || !ok {
		w.t.Fatalf("read lease: found=%v err=%v", ok, err)
	}
	return l
}

// sameRow reports whether two answers show the lease row in the same state,
// whenever each was read.
func sameRow(a, b core.Lease) bool {
	a.ReadAt, b.ReadAt = time.Time{}, time.Time{}
	return a == b
}

// executor stands in for app/executor: each leadership term calls lead, which
// hands the test a leadCall and then runs until its context ends or the test
// makes it return.
type executor struct {
	t     *testing.T
	calls chan *leadCall
}

// leadCall is one term's executor as the test sees it.
type leadCall struct {
	ctx         context.Context
	lease       core.Lease
	stillLeader func() bool
	finish      chan error
	returned    chan struct{}
	// stillLeaderAtCancel is stillLeader() as the executor saw it on
	// noticing its context ended; valid once returned is closed.
	stillLeaderAtCancel bool
	cancelled           bool
}

func (x *executor) lead(ctx context.Context, lease core.Lease, stillLeader func() bool) error {
	c := &leadCall{ctx: ctx, lease: lease, stillLeader: stillLeader, finish: make(chan error, 1), returned: make(chan struct{})}
	defer close(c.returned)
	x.calls <- c
	select {
	case <-ctx.Done():
		c.cancelled = true
		c.stillLeaderAtCancel = stillLeader()
		return nil
	case err := <-c.finish:
		return err
	}
}

// next waits for the next term's executor to start.
func (x *executor) next() *leadCall {
	x.t.Helper()
	select {
	case c := <-x.calls:
		return c
	case <-time.After(waitBound):
		x.t.Fatalf("the executor was not started within %s", waitBound)
		return nil
	}
}

// none asserts that no executor has started (beyond those already taken).
func (x *executor) none() {
	x.t.Helper()
	select {
	case c := <-x.calls:
		x.t.Fatalf("an executor started at epoch %d; this instance must not lead", c.lease.Epoch)
	default:
	}
}

// waitReturned waits until the term's executor returned.
func (c *leadCall) waitReturned(t *testing.T) {
	t.Helper()
	select {
	case <-c.returned:
	case <-time.After(waitBound):
		t.Fatalf("the executor of epoch %d did not return within %s", c.lease.Epoch, waitBound)
	}
}

// logBuffer collects JSON log lines from several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// entries returns the decoded log records whose msg is event.
func (b *logBuffer) entries(t *testing.T, event string) []map[string]any {
	t.Helper()
	b.mu.Lock()
	text := b.buf.String()
	b.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(text) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q: %v", line, err)
		}
		if rec["msg"] == event {
			out = append(out, rec)
		}
	}
	return out
}

// leadershipMetrics records Metrics.Leadership calls in order.
type leadershipMetrics struct {
	ports.NopMetrics
	mu      sync.Mutex
	changes []string
}

func (m *leadershipMetrics) Leadership(leader bool, epoch int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	role := "follower"
	if leader {
		role = "leader"
	}
	m.changes = append(m.changes, role+"@"+strconv.FormatInt(epoch, 10))
}

func (m *leadershipMetrics) snapshot() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.changes...)
}

// faultyLeases wraps a LeaseStore and fails or hangs its calls on demand,
// the way a SQL connection fails under an instance.
type faultyLeases struct {
	ports.LeaseStore
	acquireErr atomic.Pointer[error]
	renewErr   atomic.Pointer[error]
	// hangRenew makes Renew block until its context ends.
	hangRenew atomic.Bool
	releases  atomic.Int32
}

func (f *faultyLeases) failAcquire(err error) { f.acquireErr.Store(&err) }
func (f *faultyLeases) failRenew(err error)   { f.renewErr.Store(&err) }

func (f *faultyLeases) Acquire(ctx context.Context, p ports.AcquireLeaseParams) (core.Lease, bool, error) {
	if err := f.acquireErr.Swap(nil); err != nil {
		return core.Lease{}, false, *err
	}
	return f.LeaseStore.Acquire(ctx, p)
}

func (f *faultyLeases) Renew(ctx context.Context, p ports.RenewLeaseParams) (core.Lease, error) {
	if f.hangRenew.Load() {
		<-ctx.Done()
		return core.Lease{}, errors.Join(core.ErrStoreUnavailable, context.Cause(ctx))
	}
	if err := f.renewErr.Load(); err != nil {
		return core.Lease{}, *err
	}
	return f.LeaseStore.Renew(ctx, p)
}

func (f *faultyLeases) Release(ctx context.Context, fence core.Fence) error {
	f.releases.Add(1)
	return f.LeaseStore.Release(ctx, fence)
}

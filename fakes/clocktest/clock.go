// Package clocktest provides a fake ports.Clock for tests. Time moves only
// when a test calls Advance, and tests synchronise with the code under test
// by waiting for the timers it arms (WaitForTimer, BlockUntilTimers) instead
// of sleeping, so a test of timed behaviour is exact and never flaky.
package clocktest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/submissionmanager/submission-manager/ports"
)

// Clock is a fake ports.Clock that is safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
	// pending holds the timers that have neither fired nor been stopped.
	pending []*Timer
	// changed is closed and replaced whenever pending changes, so waiters
	// re-check their condition without polling.
	changed chan struct{}
}

var _ ports.Clock = (*Clock)(nil)

// New returns a clock that reads start until it is advanced.
func New(start time.Time) *Clock {
	return &Clock{now: start, changed: make(chan struct{})}
}

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer returns a timer that fires once the clock has been advanced by d.
// A timer with d <= 0 has fired already, as a real one would at once.
func (c *Clock) NewTimer(d time.Duration) ports.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.newTimerLocked(c.now.Add(d))
}

// NewTimerAt returns a timer that fires once the clock reaches at, however
// far it was advanced since the caller last read it. A timer whose deadline
// is reached has fired already.
func (c *Clock) NewTimerAt(at time.Time) ports.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.newTimerLocked(at)
}

// newTimerLocked arms a timer for deadline; the caller holds mu.
func (c *Clock) newTimerLocked(deadline time.Time) *Timer {
	t := &Timer{clock: c, deadline: deadline, ch: make(chan time.Time, 1)}
	if !deadline.After(c.now) {
		t.ch <- c.now
		return t
	}
	c.pending = append(c.pending, t)
	c.signal()
	return t
}

// Advance moves the clock forward by d and fires, in deadline order, every
// timer whose deadline is now reached. A fired timer's channel receives its
// deadline, so code that reads it sees the instant it asked for.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	slices.SortStableFunc(c.pending, func(a, b *Timer) int { return a.deadline.Compare(b.deadline) })
	kept := c.pending[:0]
	fired := false
	for _, t := range c.pending {
		if t.deadline.After(c.now) {
			kept = append(kept, t)
			continue
		}
		t.ch <- t.deadline
		fired = true
	}
	clear(c.pending[len(kept):])
	c.pending = kept
	if fired {
		c.signal()
	}
}

// AdvanceTo moves the clock forward to t, firing timers as Advance does. It
// does nothing when t is not after the current time: the clock never goes back.
func (c *Clock) AdvanceTo(t time.Time) {
	if d := t.Sub(c.Now()); d > 0 {
		c.Advance(d)
	}
}

// Timers returns the deadlines of the pending timers in ascending order.
func (c *Clock) Timers() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timersLocked()
}

// timersLocked is Timers; the caller holds mu.
func (c *Clock) timersLocked() []time.Time {
	out := make([]time.Time, len(c.pending))
	for i, t := range c.pending {
		out[i] = t.deadline
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// WaitForTimer blocks until a pending timer has exactly the deadline at, and
// returns ctx's error if ctx ends first. Waiting for the deadline a piece of
// code is expected to arm proves that it reached that point: a scheduler that
// armed its next-due timer has finished everything it did before.
func (c *Clock) WaitForTimer(ctx context.Context, at time.Time) error {
	return c.waitFor(ctx, func() bool {
		return slices.ContainsFunc(c.pending, func(t *Timer) bool { return t.deadline.Equal(at) })
	})
}

// WaitForTimers blocks until the pending timers' deadlines are exactly want,
// in any order, and returns ctx's error if ctx ends first. When every piece
// of code under test arms one timer while it waits, that state proves each
// of them finished what it did and is waiting, none inside a call between
// two timers.
func (c *Clock) WaitForTimers(ctx context.Context, want ...time.Time) error {
	want = slices.SortedFunc(slices.Values(want), time.Time.Compare)
	return c.waitFor(ctx, func() bool { return slices.EqualFunc(c.timersLocked(), want, time.Time.Equal) })
}

// BlockUntilTimers blocks until at least n timers are pending, and returns
// ctx's error if ctx ends first.
func (c *Clock) BlockUntilTimers(ctx context.Context, n int) error {
	return c.waitFor(ctx, func() bool { return len(c.pending) >= n })
}

// waitFor blocks until cond, evaluated under the lock, holds.
func (c *Clock) waitFor(ctx context.Context, cond func() bool) error {
	for {
		c.mu.Lock()
		ok, changed := cond(), c.changed
		c.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-changed:
		}
	}
}

// signal wakes every waiter; the caller holds the lock.
func (c *Clock) signal() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Timer is a one-shot timer of a fake Clock.
type Timer struct {
	clock    *Clock
	deadline time.Time
	ch       chan time.Time
}

var _ ports.Timer = (*Timer)(nil)

// C delivers the timer's deadline once the clock has reached it.
func (t *Timer) C() <-chan time.Time { return t.ch }

// Stop prevents the timer from firing; it reports false when the timer had
// fired or been stopped already.
func (t *Timer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.pending, t)
	if i < 0 {
		return false
	}
	c.pending = slices.Delete(c.pending, i, i+1)
	c.signal()
	return true
}

// Deadline returns the instant on the fake clock at which the timer fires.
func (t *Timer) Deadline() time.Time { return t.deadline }

package clocktest_test

import (
	"context"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/fakes/clocktest"
)

var t0 = time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)

func fired(tm interface{ C() <-chan time.Time }) (time.Time, bool) {
	select {
	case at := <-tm.C():
		return at, true
	default:
		return time.Time{}, false
	}
}

func TestAdvanceFiresDueTimersWithTheirDeadline(t *testing.T) {
	c := clocktest.New(t0)
	early := c.NewTimer(time.Second)
	late := c.NewTimer(5 * time.Second)

	c.Advance(999 * time.Millisecond)
	if _, ok := fired(early); ok {
		t.Fatal("a timer fired before its deadline")
	}
	c.Advance(3 * time.Second)
	if at, ok := fired(early); !ok || !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("early timer: fired=%v at %v, want fired at %v", ok, at, t0.Add(time.Second))
	}
	if _, ok := fired(late); ok {
		t.Fatal("the late timer fired early")
	}
	if got := c.Now(); !got.Equal(t0.Add(3999 * time.Millisecond)) {
		t.Fatalf("Now() = %v", got)
	}
	c.AdvanceTo(t0.Add(5 * time.Second))
	if _, ok := fired(late); !ok {
		t.Fatal("the late timer did not fire at its deadline")
	}
	if n := len(c.Timers()); n != 0 {
		t.Fatalf("%d timers still pending after all fired", n)
	}
}

func TestNonPositiveTimerHasFiredAlready(t *testing.T) {
	c := clocktest.New(t0)
	if at, ok := fired(c.NewTimer(0)); !ok || !at.Equal(t0) {
		t.Fatalf("zero timer: fired=%v at %v", ok, at)
	}
	if len(c.Timers()) != 0 {
		t.Fatal("a fired timer is still pending")
	}
}

func TestStopPreventsFiringAndReportsWhetherItDid(t *testing.T) {
	c := clocktest.New(t0)
	tm := c.NewTimer(time.Second)
	if !tm.Stop() {
		t.Fatal("Stop of a pending timer reported false")
	}
	if tm.Stop() {
		t.Fatal("a second Stop reported true")
	}
	c.Advance(time.Hour)
	if _, ok := fired(tm); ok {
		t.Fatal("a stopped timer fired")
	}
	other := c.NewTimer(time.Second)
	c.Advance(time.Second)
	if other.Stop() {
		t.Fatal("Stop of a fired timer reported true")
	}
}

func TestWaitForTimerReturnsOnceTheDeadlineIsArmed(t *testing.T) {
	c := clocktest.New(t0)
	armed := make(chan struct{})
	go func() {
		defer close(armed)
		c.NewTimer(time.Minute)
		c.NewTimer(5 * time.Second)
	}()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := c.WaitForTimer(ctx, t0.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := c.BlockUntilTimers(ctx, 2); err != nil {
		t.Fatal(err)
	}
	<-armed
}

// TestWaitForTimersWaitsForExactlyThoseDeadlines: a set that is only part
// of the pending timers, or that one of them has left, is not enough.
func TestWaitForTimersWaitsForExactlyThoseDeadlines(t *testing.T) {
	c := clocktest.New(t0)
	a := c.NewTimer(time.Second)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		b := c.NewTimer(2 * time.Second)
		c.NewTimer(3 * time.Second)
		b.Stop()
	}()
	// Pending go from {1s} through {1s, 2s} and {1s, 2s, 3s} to {1s, 3s}.
	if err := c.WaitForTimers(ctx, t0.Add(3*time.Second), t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	<-stopped
	a.Stop()
	done, cancelDone := context.WithCancel(t.Context())
	cancelDone()
	if err := c.WaitForTimers(done, t0.Add(3*time.Second), t0.Add(time.Second)); err == nil {
		t.Fatal("WaitForTimers returned nil after one of the deadlines was stopped")
	}
	if err := c.WaitForTimers(done); err == nil {
		t.Fatal("WaitForTimers returned nil for no deadline while one is pending")
	}
	if err := c.WaitForTimers(ctx, t0.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
}

func TestWaitForTimerHonoursItsContext(t *testing.T) {
	c := clocktest.New(t0)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.WaitForTimer(ctx, t0.Add(time.Second)); err == nil {
		t.Fatal("WaitForTimer returned nil for a deadline nobody armed")
	}
	if err := c.BlockUntilTimers(ctx, 1); err == nil {
		t.Fatal("BlockUntilTimers returned nil with no timer pending")
	}
}

// TestTimerAtFiresAtItsTimeWhereverTheClockMovedMeanwhile checks that a
// timer armed at a time fires when the clock reaches that time, and at once
// when the clock has already passed it, unlike a duration read off an
// earlier Now.
func TestTimerAtFiresAtItsTimeWhereverTheClockMovedMeanwhile(t *testing.T) {
	c := clocktest.New(t0)
	due := t0.Add(5 * time.Second)
	c.Advance(2 * time.Second) // the caller read t0, then the clock moved
	at := c.NewTimerAt(due)
	c.Advance(2 * time.Second)
	if _, ok := fired(at); ok {
		t.Fatal("the timer fired before its time")
	}
	c.Advance(time.Second)
	if when, ok := fired(at); !ok || !when.Equal(due) {
		t.Fatalf("fired=%v at %v, want fired at %v", ok, when, due)
	}
	c.Advance(time.Minute)
	passed := c.NewTimerAt(due)
	if _, ok := fired(passed); !ok {
		t.Fatal("a timer armed at a time already passed has not fired")
	}
	if n := len(c.Timers()); n != 0 {
		t.Fatalf("%d timers pending", n)
	}
}

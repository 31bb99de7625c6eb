package executor_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// slowResults holds every result write until released or until its
// context ends, as a database server short of CPU holds a batch of results,
// and reports how the held write ended.
type slowResults struct {
	ports.Store
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	ended   chan error
	freed   sync.Once
}

// free lets the held write go on; a failing test's cleanup calls it too.
func (s *slowResults) free() { s.freed.Do(func() { close(s.release) }) }

func (s *slowResults) FinishAttempts(ctx context.Context, ps []ports.FinishAttemptParams) []error {
	s.once.Do(func() { close(s.entered) })
	select {
	case <-s.release:
		s.ended <- nil
		return s.Store.FinishAttempts(ctx, ps)
	case <-ctx.Done():
		s.ended <- context.Cause(ctx)
		errs := make([]error, len(ps))
		for i := range errs {
			errs[i] = ctx.Err()
		}
		return errs
	}
}

func newSlowResults(t *testing.T) (*harness, *slowResults) {
	slow := &slowResults{entered: make(chan struct{}), release: make(chan struct{}), ended: make(chan error, 1)}
	h := newHarness(t, withMaxInFlight(1), func(c *executor.Config) {
		slow.Store = c.Store
		c.Store = slow
	})
	t.Cleanup(slow.free)
	h.on("i-1", accepted)
	h.submit("i-1", smsDeadline, `{}`)
	h.startLead()
	h.waitCall()
	<-slow.entered
	return h, slow
}

// A result write that takes longer than FinishTimeout while the term runs
// is waited for, not cut short: a store slowed by load is no reason to end
// a term whose lease holds (it ended the leader's term under load on SQL
// Server before). FinishTimeout starts only when the term stops.
func TestSlowResultWriteKeepsTheTerm(t *testing.T) {
	h, slow := newSlowResults(t)
	if timers := h.clock.Timers(); len(timers) != 1 || !timers[0].Equal(h.clock.Now().Add(h.refreshInterval())) {
		t.Fatalf("timers %v while the result is written, want the scheduler's refresh only", timers)
	}
	h.settle(executor.DefaultFinishTimeout + 7*time.Minute) // well past the harness's FinishTimeout
	select {
	case err := <-slow.ended:
		t.Fatalf("the result write ended (%v) while the term runs", err)
	case err := <-h.leadErr:
		t.Fatalf("Lead returned %v while its result write was slow", err)
	default:
	}
	slow.free()
	if err := <-slow.ended; err != nil {
		t.Fatal(err)
	}
	h.waitStatus("i-1", core.StatusAccepted)
	if err := h.stopLead(); err != nil {
		t.Fatal(err)
	}
}

// Once the term stops (its drain ended: DrainTimeout after the shutdown
// began), a result write still under way has FinishTimeout left.
func TestResultWriteOutlivesTheStopByFinishTimeout(t *testing.T) {
	h, slow := newSlowResults(t)
	h.settle(time.Minute)
	h.stop()
	drainEnds := h.clock.Now().Add(executor.DefaultDrainTimeout)
	h.waitTimer(drainEnds)
	h.clock.Advance(executor.DefaultDrainTimeout)
	bound := h.clock.Now().Add(h.cfg.FinishTimeout)
	h.waitTimer(bound)
	h.clock.Advance(h.cfg.FinishTimeout - time.Second)
	select {
	case err := <-slow.ended:
		t.Fatalf("the result write ended (%v) before FinishTimeout had passed after the stop", err)
	default:
	}
	h.clock.Advance(time.Second)
	if err := <-slow.ended; err != context.DeadlineExceeded {
		t.Fatalf("the held result write ended with %v, want context.DeadlineExceeded", err)
	}
	h.leadResult()
}

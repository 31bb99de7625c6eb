package executor_test

import (
	"slices"
	"time"

	"context"
	"sync"
	"testing"

	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/app/protection"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// blockingFinish holds the FinishAttempt of one intent until released, as a
// slow disk would hold a result write.
type blockingFinish struct {
	ports.Store
	intentID string
	entered  chan struct{}
	release  chan struct{}
}

func (s *blockingFinish) FinishAttempt(ctx context.Context, p ports.FinishAttemptParams) error {
	if p.IntentID == s.intentID {
		close(s.entered)
		<-s.release
	}
	return s.Store.FinishAttempt(ctx, p)
}

func (s *blockingFinish) FinishAttempts(ctx context.Context, ps []ports.FinishAttemptParams) []error {
	return finishEach(ctx, ps, s.FinishAttempt)
}

// TestResultWritesHoldNoGatewaySlot pins that MaxInFlight bounds gateway
// calls, not result writes: with one slot, the next due intent is called
// while the previous attempt's result is still being written, so a slow
// write does not stall the gateway pipeline (and the result is still
// durable before that intent's next attempt, which waits for it).
func TestResultWritesHoldNoGatewaySlot(t *testing.T) {
	slow := &blockingFinish{intentID: "i-slow", entered: make(chan struct{}), release: make(chan struct{})}
	h := newHarness(t, withMaxInFlight(1), func(c *executor.Config) {
		slow.Store = c.Store
		c.Store = slow
	})
	var once sync.Once
	unblock := func() { once.Do(func() { close(slow.release) }) }
	t.Cleanup(unblock) // a failing test must not leave the write held
	h.on("i-slow", accepted)
	h.on("i-next", accepted)
	h.submit("i-slow", smsDeadline, `{}`)
	h.startLead()
	if c := h.waitCall(); c.Params.Reference != "i-slow" {
		t.Fatalf("first call for %s, want i-slow", c.Params.Reference)
	}
	<-slow.entered // i-slow's result write is under way and held
	h.submit("i-next", smsDeadline, `{}`)
	if c := h.waitCall(); c.Params.Reference != "i-next" {
		t.Fatalf("second call for %s, want i-next", c.Params.Reference)
	}
	h.waitStatus("i-next", core.StatusAccepted)
	unblock()
	h.waitStatus("i-slow", core.StatusAccepted)
	if err := h.stopLead(); err != nil {
		t.Fatal(err)
	}
}

// reservedAhead reports whether the intent's next attempt is reserved and
// open: written to the store, not finished.
func reservedAhead(in core.Intent) bool {
	last, ok := in.LastAttempt()
	return ok && !last.Finished()
}

// oneSlotHeld starts a leader with one call slot, i-1's call held in it and
// i-2 due behind it (an smsDeadline intent each, both accepted), and returns
// the channel that releases i-1's answer.
func oneSlotHeld(t *testing.T, opts ...option) (*harness, chan struct{}) {
	t.Helper()
	h := newHarness(t, append([]option{withMaxInFlight(1)}, opts...)...)
	hold := make(chan struct{})
	h.on("i-1", accepted.HeldUntil(hold))
	h.on("i-2", accepted)
	h.submit("i-1", smsDeadline, `{}`)
	h.submit("i-2", smsDeadline, `{}`)
	h.startLead()
	if c := h.waitCall(); c.Params.Reference != "i-1" {
		t.Fatalf("first call for %s, want i-1", c.Params.Reference)
	}
	return h, hold
}

// TestAttemptIsReservedAheadOfAFreeSlot pins what ReserveAhead buys: while
// the one slot is busy, the next due intent's attempt is already reserved
// (durable), and it is called as soon as the slot frees, in schedule order.
func TestAttemptIsReservedAheadOfAFreeSlot(t *testing.T) {
	h, hold := oneSlotHeld(t)
	h.waitIntent("i-2", "is reserved ahead", reservedAhead)
	if n := h.gw.CallCount(); n != 1 {
		t.Fatalf("%d gateway calls with the one slot held, want 1", n)
	}
	close(hold)
	h.waitStatus("i-2", core.StatusAccepted)
	if err := h.stopLead(); err != nil {
		t.Fatal(err)
	}
	if order := h.gw.References(); !slices.Equal(order, []string{"i-1", "i-2"}) {
		t.Fatalf("call order %v, want i-1 then i-2", order)
	}
}

// TestAttemptLatencyIsTheCallsNotTheWaitForASlot: an attempt reserved ahead
// waits for its slot after its reservation (its StartedAt); the latency it
// reports is its gateway call's, from the call to the answer, so the wait
// does not pass for a slow gateway.
func TestAttemptLatencyIsTheCallsNotTheWaitForASlot(t *testing.T) {
	h, hold := oneSlotHeld(t)
	h.waitIntent("i-2", "is reserved ahead", reservedAhead)
	h.settle(time.Second) // i-1's call, and i-2's wait for the slot, take a second
	close(hold)
	h.waitStatus("i-2", core.StatusAccepted)
	if err := h.stopLead(); err != nil {
		t.Fatal(err)
	}
	h.metrics.mu.Lock()
	l := slices.Clone(h.metrics.latencies)
	h.metrics.mu.Unlock()
	slices.Sort(l) // the two results may be recorded in either order
	if len(l) != 2 || l[0] != 0 || l[1] < time.Second {
		t.Fatalf("latencies %v, want i-2's call of none (it took no time) and i-1's of a second or more", l)
	}
}

// TestNoReserveAheadReservesOnlyForAFreeSlot pins the opt-out: with
// NoReserveAhead nothing is written for the next intent while the slot is
// busy.
func TestNoReserveAheadReservesOnlyForAFreeSlot(t *testing.T) {
	h, hold := oneSlotHeld(t, func(c *executor.Config) { c.ReserveAhead = executor.NoReserveAhead })
	h.settle(time.Second) // a refresh and a dispatch round with the slot busy
	if in, _ := h.mem.GetIntent(h.ctx, "i-2"); in.AttemptCount != 0 {
		t.Fatalf("i-2 has %d attempts while the only slot is busy, want none reserved", in.AttemptCount)
	}
	close(hold)
	h.waitStatus("i-2", core.StatusAccepted)
	if err := h.stopLead(); err != nil {
		t.Fatal(err)
	}
}

// TestShutdownClosesAttemptsReservedAheadAsNotSent: a graceful shutdown lets
// the call under way finish, but an attempt reserved ahead and not yet
// called is closed as never sent: no try, the intent due at once for the
// next leader.
func TestShutdownClosesAttemptsReservedAheadAsNotSent(t *testing.T) {
	h, hold := oneSlotHeld(t)
	reserved := h.waitIntent("i-2", "is reserved ahead", reservedAhead)
	h.stop() // graceful: the drain begins
	in := h.waitIntent("i-2", "has its reserved attempt closed", func(in core.Intent) bool { return !reservedAhead(in) })
	close(hold)
	if err := h.stopLead(); err != nil {
		t.Fatal(err)
	}
	h.waitStatus("i-1", core.StatusAccepted)
	a := in.Attempts[0]
	if in.Status != core.StatusPending || a.Sent || a.Error != executor.NotCalledError ||
		!in.NextDueAt.Equal(reserved.Attempts[0].StartedAt) || len(h.gw.CallsFor("i-2")) != 0 {
		t.Fatalf("i-2 after the shutdown: status %s, attempt %+v, due %s, %d calls; want pending, not sent (%q), due at its reservation, no call",
			in.Status, a, in.NextDueAt, len(h.gw.CallsFor("i-2")), executor.NotCalledError)
	}
}

// TestBreakerOpeningBeforeTheSlotDefersAReservedAttempt: an attempt admitted
// and reserved while the breaker was closed, whose breaker opened while it
// waited for its slot, does not call the gateway: it is closed as never
// sent (no try) and due at the probe.
func TestBreakerOpeningBeforeTheSlotDefersAReservedAttempt(t *testing.T) {
	br := &core.BreakerConfig{Threshold: 1, Window: time.Minute, OpenFor: 10 * time.Second, MaxOpenFor: 20 * time.Second}
	h := newHarness(t, withMaxInFlight(1), withProtection(protection.Config{Breaker: br}))
	hold := make(chan struct{})
	h.on("i-1", gatewayDown.HeldUntil(hold), accepted)
	h.on("i-2", accepted)
	h.submit("i-1", smsMaxAttempts, `{}`)
	h.submit("i-2", smsMaxAttempts, `{}`)
	h.startLead()
	h.waitCall()
	h.waitIntent("i-2", "is reserved ahead", reservedAhead)
	close(hold) // the failure opens the breaker: probe at t0+10s
	in := h.waitIntent("i-2", "has its reserved attempt closed", func(in core.Intent) bool {
		return len(in.Attempts) == 1 && in.Attempts[0].Finished()
	})
	h.awaitProtection("deferred http://sms-b.test breaker_open", 1)
	if a := in.Attempts[0]; a.Sent || in.Status != core.StatusPending || !in.NextDueAt.Equal(t0.Add(10*time.Second)) ||
		len(h.gw.CallsFor("i-2")) != 0 {
		t.Fatalf("i-2: status %s, attempt %+v, due %s, %d calls; want pending, not sent, due at the probe, no call",
			in.Status, a, in.NextDueAt.Sub(t0), len(h.gw.CallsFor("i-2")))
	}
	if err := h.stopLead(); err != nil {
		t.Fatal(err)
	}
}

package executor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// An intent whose attempt falls due only after its acceptance deadline (no
// leader ran meanwhile) is exhausted without a gateway call: an acceptance
// then could not count, and the message must not go out.
func TestNoGatewayCallAfterTheDeadlinePassed(t *testing.T) {
	h := newHarness(t)
	h.on("i-1", accepted)
	h.submit("i-1", smsDeadline, `{}`) // no leader yet: the notification is dropped
	h.clock.Advance(40 * time.Second)  // failover took longer than the 30 s deadline
	h.startLead()
	in := h.waitStatus("i-1", core.StatusExhausted)
	if in.ExhaustedReason != core.ExhaustedDeadlineExceeded || len(in.Attempts) != 1 ||
		in.Attempts[0].Error != executor.DeadlinePassedError {
		t.Fatalf("intent after a late pickup: %+v", in)
	}
	if in.Attempts[0].Sent {
		t.Fatal("the attempt that fell due past the deadline is stored as sent; the gateway was never called")
	}
	if n := h.gw.CallCount(); n != 0 {
		t.Fatalf("gateway called %d time(s) %v after creation, past the 30 s deadline; attempt fact=%+v",
			n, h.gw.CallsFor("i-1")[0].At.Sub(in.CreatedAt), in.Attempts[0].Outcome)
	}
}

// Leadership lost between the reservation and the gateway call (a renew
// timed out while the database lease still held): the gateway is never
// called, and the one_shot intent stays pending, due at once, for the next
// leader's single real try.
func TestUnsentAttemptDoesNotConsumeTheOneShot(t *testing.T) {
	h := newHarness(t)
	h.on("i-1", accepted)
	h.submit("i-1", pushOneShot, `{}`)
	lease, ok, err := h.mem.Acquire(h.ctx, ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "a", Duration: time.Hour})
	if err != nil || !ok {
		t.Fatal(err)
	}
	still := func() bool { // e.g. a renew timed out: elector dropped, DB lease still valid
		in, _ := h.mem.GetIntent(context.Background(), "i-1")
		return in.AttemptCount == 0
	}
	_ = h.executor.Lead(h.ctx, lease, still)
	in, _ := h.mem.GetIntent(h.ctx, "i-1")
	if h.gw.CallCount() != 0 {
		t.Fatalf("gateway called %d times after leadership was lost", h.gw.CallCount())
	}
	if in.Status != core.StatusPending || !in.NextDueAt.Equal(in.Attempts[0].StartedAt) ||
		in.Attempts[0].Error != executor.NotSubmittedError {
		t.Fatalf("one_shot intent after an unsent attempt: %+v", in)
	}
}

// An unsent attempt (leadership lost between reservation and call) is not a
// try: a max_attempts intent still gets its full number of gateway calls.
func TestUnsentAttemptDoesNotCountTowardMaxAttempts(t *testing.T) {
	h := newHarness(t)
	flip := leaderFlipStore{Store: h.mem, h: h}
	h.store, h.cfg.Store = flip, flip
	h.rebuildExecutor()
	h.startLead()
	h.on("m-1", providerFailure, providerFailure, providerFailure, accepted)
	h.submit("m-1", smsMaxAttempts, `{}`)
	if err := h.leadResult(); !errors.Is(err, core.ErrFenced) {
		t.Fatalf("first term ended with %v, want lost leadership", err)
	}

	// The next term (after the lease changed hands) runs on a store that no
	// longer flips leadership.
	if err := h.mem.Release(h.ctx, h.lease.Fence()); err != nil {
		t.Fatal(err)
	}
	h.leader.Store(true)
	h.store, h.cfg.Store = h.mem, h.mem
	h.rebuildExecutor()
	mark, _ := h.metrics.inFlightReports()
	h.startLead()
	// Each retry is scheduled, not only stored, before the clock moves.
	in := h.waitAttempts("m-1", 2)
	h.awaitIdle(mark, in.NextDueAt)
	mark, _ = h.metrics.inFlightReports()
	h.settle(core.DefaultRetryDelay)
	in = h.waitAttempts("m-1", 3)
	h.awaitIdle(mark, in.NextDueAt)
	h.settle(core.DefaultRetryDelay)
	in = h.waitStatus("m-1", core.StatusExhausted)
	if calls := len(h.gw.CallsFor("m-1")); calls != 3 || in.AttemptCount != 4 || in.ExhaustedReason != core.ExhaustedMaxAttempts {
		t.Fatalf("%d gateway calls, %d attempts, %q; want 3 calls (the unsent attempt is not a try), 4 attempts, max_attempts_reached",
			calls, in.AttemptCount, in.ExhaustedReason)
	}
}

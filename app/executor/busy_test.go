package executor_test

import (
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/protection"
	"github.com/submissionmanager/submission-manager/core"
)

// busyAnswer is a gateway's 429 with Retry-After: it took nothing and asked
// to be called again after wait (ports.GatewayBusy).
type busyAnswer struct{ wait time.Duration }

func (b busyAnswer) Error() string {
	return "gateway answered HTTP 429 (Retry-After: " + b.wait.String() + ")"
}
func (b busyAnswer) RetryAfter() time.Duration { return b.wait }

// A busy gateway is waited for as it asks, up to the operator's bound:
// the busy attempt is no try (a max-attempts intent of two tries still has
// both), every other intent of that gateway waits too instead of calling
// it, and the calls resume once the time has passed.
func TestBusyGatewayIsWaitedForWithoutSpendingTries(t *testing.T) {
	h := newHarness(t, withMaxInFlight(1), withProtection(protection.Config{
		Breaker: testBreaker(), MaxRetryAfter: 30 * time.Second,
	}))
	twoTries := smsMaxAttempts
	twoTries.MaxAttempts = 2
	h.on("b-1", failed(busyAnswer{wait: 20 * time.Second}), gatewayDown, accepted)
	h.on("b-2", accepted)
	h.startLead()
	mark, _ := h.metrics.inFlightReports()
	h.submit("b-1", twoTries, `{}`)
	busyUntil := t0.Add(20 * time.Second)
	b1 := h.waitIntent("b-1", "waiting for the gateway", func(in core.Intent) bool {
		return len(in.Attempts) == 1 && in.Attempts[0].Finished()
	})
	if b1.Attempts[0].Sent || !b1.NextDueAt.Equal(busyUntil) || b1.Status != core.StatusPending {
		t.Fatalf("b-1 after the busy answer: %+v; want pending until %s with the attempt not sent", b1, busyUntil.Sub(t0))
	}
	h.submit("b-2", smsMaxAttempts, `{}`)
	b2 := h.waitIntent("b-2", "deferred", func(in core.Intent) bool { return in.NextDueAt.Equal(busyUntil) })
	if b2.AttemptCount != 0 {
		t.Fatalf("b-2 called the busy gateway: %+v", b2)
	}
	h.awaitProtection("deferred http://sms-b.test retry_after", 1)
	h.awaitIdle(mark, busyUntil)
	mark, _ = h.metrics.inFlightReports()
	h.settle(busyUntil.Sub(h.clock.Now()))
	h.waitStatus("b-2", core.StatusAccepted)
	// b-1's busy attempt spent no try: its failure now is its first try,
	// so the second, after the retry delay, is still allowed.
	h.waitAttempts("b-1", 2)
	h.awaitIdle(mark, busyUntil.Add(5*time.Second))
	h.settle(5 * time.Second)
	if in := h.waitStatus("b-1", core.StatusAccepted); len(in.Attempts) != 3 || core.Tries(3, in.Attempts) != 2 {
		t.Fatalf("b-1: %d attempts, %d tries; want 3 attempts and 2 tries", len(in.Attempts), core.Tries(3, in.Attempts))
	}
	for _, c := range h.gw.Calls() {
		if c.At.After(t0) && c.At.Before(busyUntil) {
			t.Fatalf("a call of %s at %s while the gateway asked for time", c.Params.Reference, c.At.Sub(t0))
		}
	}
}

package executor_test

import (
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/protection"
	"github.com/submissionmanager/submission-manager/core"
)

// A deferral past an intent's deadline exhausts it, and the deadline of a
// scheduled send is counted from its notBefore, not from its creation. This
// test guards that: a deadline intent created at t0 with notBefore t0+60s
// falls due while the breaker is open, and its probe at t0+65s is after
// creation+30s but before notBefore+30s. The intent must stay pending,
// deferred to the probe without spending a try, and be accepted after it.
// Counting the deadline from creation would exhaust it with
// deadline_exceeded before its first attempt.
func TestScheduledDeadlineIntentDeferredByOpenBreakerCountsFromNotBefore(t *testing.T) {
	h := newHarness(t, withMaxInFlight(1), withProtection(protection.Config{Breaker: testBreaker()}))
	deadlineB := deadlineOnB()
	h.on("b-1", gatewayDown, accepted)
	h.on("b-2", gatewayDown, accepted)
	h.on("later", accepted)
	h.startLead()

	notBefore := t0.Add(time.Minute)
	window := time.Duration(deadlineB.MaxAcceptanceSeconds) * time.Second
	if in := h.submitAt("later", deadlineB, `{}`, notBefore); !in.CreatedAt.Equal(t0) || !in.NextDueAt.Equal(notBefore) {
		t.Fatalf("submit: %+v; want created at t0, due at notBefore", in)
	}

	// Open the breaker shortly before notBefore: two failures at t0+55s
	// put the probe at t0+65s.
	h.settle(55 * time.Second)
	mark, _ := h.metrics.inFlightReports()
	h.submit("b-1", smsMaxAttempts, `{}`)
	h.waitAttempts("b-1", 1)
	h.submit("b-2", smsMaxAttempts, `{}`)
	h.waitAttempts("b-2", 1)
	h.awaitProtection("breaker http://sms-b.test closed->open", 1)
	probeAt := h.clock.Now().Add(testBreaker().OpenFor)
	if !probeAt.After(t0.Add(window)) || !probeAt.Before(notBefore.Add(window)) {
		t.Fatalf("probe at %s does not fall between creation+%s and notBefore+%s", probeAt.Sub(t0), window, window)
	}

	// At notBefore the scheduled intent falls due with the breaker open
	// (so do b-1 and b-2's retries, once the scheduler has their results).
	h.awaitIdle(mark, notBefore)
	mark, _ = h.metrics.inFlightReports()
	h.settle(notBefore.Sub(h.clock.Now()))
	h.awaitProtection("deferred http://sms-b.test breaker_open", 3)
	in := h.waitIntent("later", "deferred or ended", func(in core.Intent) bool {
		return in.Status.Terminal() || in.NextDueAt.Equal(probeAt)
	})
	if in.Status != core.StatusPending || in.AttemptCount != 0 || len(in.Attempts) != 0 || !in.NextDueAt.Equal(probeAt) {
		t.Fatalf("later after its deferral: status %s (%s), %d tries, %d attempts, due at %v; "+
			"want pending, no try spent, due at the probe %v",
			in.Status, in.ExhaustedReason, in.AttemptCount, len(in.Attempts), in.NextDueAt, probeAt)
	}
	if n := len(h.gw.CallsFor("later")); n != 0 {
		t.Fatalf("later called %d times while the breaker was open", n)
	}

	// The probe closes the breaker and the scheduled send goes out within
	// its window.
	h.awaitIdle(mark, probeAt) // all three deferrals scheduled, not only stored
	h.settle(probeAt.Sub(h.clock.Now()))
	in = h.waitStatus("later", core.StatusAccepted)
	if len(in.Attempts) != 1 || !in.Attempts[0].StartedAt.Before(notBefore.Add(window)) {
		t.Fatalf("later accepted with attempts %+v, want one before notBefore+%s", in.Attempts, window)
	}
	for _, id := range []string{"b-1", "b-2"} {
		h.waitStatus(id, core.StatusAccepted)
	}
}

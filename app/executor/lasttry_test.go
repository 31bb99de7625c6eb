package executor_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/protection"
	"github.com/submissionmanager/submission-manager/core"
)

// An outage shorter than the deadline exhausts no deadline intent. The
// breaker opens at the first failure and would probe only after the
// intents' 30 s deadline, so every due attempt of theirs is deferred; before
// the last-try rule each was exhausted at once, at its first deferral,
// though the gateway was back well before the deadline. Now each waits for
// its last try, a second before the deadline, which the open breaker lets
// through, and every intent is accepted.
func TestAnOutageShorterThanTheDeadlineExhaustsNoIntent(t *testing.T) {
	late := &core.BreakerConfig{Threshold: 1, Window: time.Minute, OpenFor: 40 * time.Second, MaxOpenFor: 40 * time.Second}
	h := newHarness(t, withProtection(protection.Config{Breaker: late}))
	h.on("d-0", gatewayDown, accepted)
	ids := []string{"d-0"}
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("d-%d", i)
		h.on(id, accepted)
		ids = append(ids, id)
	}
	h.startLead()
	mark, _ := h.metrics.inFlightReports()
	h.submit("d-0", smsDeadline, `{}`) // the outage begins: the breaker opens, probing at t0+40s
	h.waitAttempts("d-0", 1)
	h.awaitProtection("breaker http://sms-a.test closed->open", 1)
	h.awaitIdle(mark, t0.Add(5*time.Second)) // d-0's retry
	mark, _ = h.metrics.inFlightReports()
	for _, id := range ids[1:] {
		h.submit(id, smsDeadline, `{}`)
	}
	lastTry := t0.Add(30*time.Second - core.LastTryLead)
	for _, id := range ids[1:] {
		in := h.waitIntent(id, "deferred", func(in core.Intent) bool { return in.Status.Terminal() || in.NextDueAt.Equal(lastTry) })
		if in.Status != core.StatusPending {
			t.Fatalf("%s deferred during the outage: %s (%s); want pending until its last try", id, in.Status, in.ExhaustedReason)
		}
	}
	h.awaitIdle(mark, t0.Add(5*time.Second))
	mark, _ = h.metrics.inFlightReports()
	h.settle(5 * time.Second) // d-0's retry, deferred to its last try as well
	h.waitIntent("d-0", "deferred", func(in core.Intent) bool { return in.NextDueAt.Equal(lastTry) })
	h.awaitIdle(mark, lastTry)
	// The outage ended long before (the scripts accept from now on): each
	// intent's last try goes through the still open breaker.
	h.settle(lastTry.Sub(h.clock.Now()))
	for _, id := range ids {
		in := h.waitStatus(id, core.StatusAccepted)
		calls := h.gw.CallsFor(id)
		if last := calls[len(calls)-1]; !last.At.Equal(lastTry) {
			t.Errorf("%s accepted by a call at %s, want its last try at %s", id, last.At.Sub(t0), lastTry.Sub(t0))
		}
		if want := 1; id == "d-0" {
			want = 2
			if len(in.Attempts) != want {
				t.Errorf("%s has %d attempts, want %d", id, len(in.Attempts), want)
			}
		} else if len(in.Attempts) != want {
			t.Errorf("%s has %d attempts, want %d", id, len(in.Attempts), want)
		}
	}
	h.awaitProtection("breaker http://sms-a.test open->closed", 1) // the last try's success closed it
}

package executor_test

import (
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// A scheduled send is not attempted before its notBefore, and under a
// deadline contract its acceptance window opens then: an hour-ahead send
// under a 30 s deadline is accepted, not exhausted before it starts.
func TestScheduledSendRunsAtNotBeforeWithItsDeadlineFromThen(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.on("later", accepted)
	notBefore := t0.Add(time.Hour)
	if in := h.submitAt("later", smsDeadline, `{"text":"hi"}`, notBefore); !in.NotBefore.Equal(notBefore) || !in.NextDueAt.Equal(notBefore) {
		t.Fatalf("submit: %+v; want due at notBefore", in)
	}
	h.settle(time.Minute)
	if n := h.gw.CallCount(); n != 0 {
		t.Fatalf("gateway called %d times before notBefore", n)
	}
	h.clock.Advance(notBefore.Sub(h.clock.Now()) + 10*time.Second)
	in := h.waitStatus("later", core.StatusAccepted)
	if started := in.Attempts[0].StartedAt; started.Before(notBefore) {
		t.Errorf("first attempt started at %v, before notBefore %v", started, notBefore)
	}
}

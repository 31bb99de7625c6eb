package executor_test

import (
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// A scheduled send is not attempted before its notBefore, and under a
// deadline contract its acceptance window opens then: an hour-ahead send
// under a 30 s deadline is accepted, not exhausted before it starts.
func TestScheduledSendRunsAtNotBeforeWithItsDeadlineFromThen(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.gw.on("later", accepted)
	notBefore := t0.Add(time.Hour)
	res, err := h.service.SubmitIntent(h.ctx, ports.SubmitIntentParams{
		IntentID: "later", SubmissionTarget: smsDeadline.SubmissionTarget, Payload: []byte(`{"text":"hi"}`), NotBefore: notBefore,
	})
	if err != nil || !res.Created || !res.Intent.NotBefore.Equal(notBefore) || !res.Intent.NextDueAt.Equal(notBefore) {
		t.Fatalf("submit: %+v, %v; want created, due at notBefore", res.Intent, err)
	}
	h.settle(time.Minute)
	if n := h.gw.callCount(); n != 0 {
		t.Fatalf("gateway called %d times before notBefore", n)
	}
	h.clock.Advance(notBefore.Sub(h.clock.Now()) + 10*time.Second)
	in := h.waitStatus("later", core.StatusAccepted)
	if started := in.Attempts[0].StartedAt; started.Before(notBefore) {
		t.Errorf("first attempt started at %v, before notBefore %v", started, notBefore)
	}
}

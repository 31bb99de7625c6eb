package executor_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// lostAnswer is a call error after which the gateway may have acted: the
// connection broke once the request was out.
var lostAnswer = failed(fmt.Errorf("read tcp: connection reset by peer: %w", ports.ErrAnswerLost))

// TestLostAnswerSettledByTheLookupEndsAccepted is the soak's case: the
// gateway accepted, the connection dropped before its answer, and the
// deadline would pass while every retry got duplicate_reference. Asked at
// once, the lookup says accepted, and the attempt is closed as accepted
// with the gateway's message id, after one call.
func TestLostAnswerSettledByTheLookupEndsAccepted(t *testing.T) {
	h := newHarness(t)
	lg := withLookup(h, map[string]ports.LookupResult{
		"la-1": {Answer: core.LookupKnown, Outcome: core.Outcome{Status: core.OutcomeAccepted, MessageID: "m-7"}},
	}, nil)
	h.on("la-1", lostAnswer, duplicate)
	h.submit("la-1", smsDeadline, `{}`)
	h.startLead()

	in := h.waitStatus("la-1", core.StatusAccepted)
	if len(in.Attempts) != 1 || !in.Attempts[0].Sent || in.Attempts[0].Outcome == nil ||
		in.Attempts[0].Outcome.MessageID != "m-7" || in.Attempts[0].Error != "" {
		t.Fatalf("attempts %+v, want one sent attempt closed with the looked-up acceptance", in.Attempts)
	}
	if in.FinalOutcome == nil || in.FinalOutcome.MessageID != "m-7" || in.PossiblyAccepted {
		t.Fatalf("final outcome %+v, flagged %v: want the acceptance, not a flag", in.FinalOutcome, in.PossiblyAccepted)
	}
	if n := h.gw.CallCount(); n != 1 {
		t.Fatalf("the gateway was submitted to %d times, want 1", n)
	}
	if !slices.Equal(lg.asked, []string{"la-1"}) {
		t.Fatalf("lookups %v, want one for la-1", lg.asked)
	}
}

// TestLostAnswerStaysInDoubtUnlessTheLookupSaysAccepted covers every other
// lookup answer: a rejection (maybe an earlier attempt's), "never received"
// (the gateway may not have registered the call yet), no clear answer. The
// attempt keeps its error, sent and in doubt, and is retried; a duplicate
// then flags the intent as before lookups.
func TestLostAnswerStaysInDoubtUnlessTheLookupSaysAccepted(t *testing.T) {
	for name, answer := range map[string]ports.LookupResult{
		"rejected":       {Answer: core.LookupKnown, Outcome: core.Outcome{Status: core.OutcomeRejected, Reason: "provider_failure"}},
		"never received": {Answer: core.LookupNeverReceived},
		"unsupported":    {Answer: core.LookupUnsupported},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			lg := withLookup(h, map[string]ports.LookupResult{"la-2": answer}, nil)
			h.on("la-2", lostAnswer, duplicate)
			h.submit("la-2", smsMaxAttempts, `{}`)
			h.startLead()

			in := h.waitAttempts("la-2", 1)
			if a := in.Attempts[0]; !a.Sent || a.Outcome != nil || a.Error != lostAnswer.Err.Error() {
				t.Fatalf("first attempt %+v, want it sent with its lost answer's error: in doubt", a)
			}
			if !slices.Equal(lg.asked, []string{"la-2"}) {
				t.Fatalf("lookups %v, want one for la-2", lg.asked)
			}
			h.waitTimer(in.NextDueAt)
			h.clock.AdvanceTo(in.NextDueAt)
			h.waitIntent("la-2", "flagged", func(in core.Intent) bool { return in.PossiblyAccepted })
		})
	}
}

// TestAnAnswerThatCameIsNotLookedUp: an error the gateway client does not
// mark as a lost answer (a non-200 status, a call never made) says the
// gateway did not act, so no lookup is spent on it.
func TestAnAnswerThatCameIsNotLookedUp(t *testing.T) {
	h := newHarness(t)
	lg := withLookup(h, map[string]ports.LookupResult{
		"la-3": {Answer: core.LookupKnown, Outcome: core.Outcome{Status: core.OutcomeAccepted}},
	}, nil)
	h.on("la-3", failed(errors.New("gateway answered HTTP 503")), accepted)
	h.submit("la-3", smsMaxAttempts, `{}`)
	h.startLead()

	in := h.waitAttempts("la-3", 1)
	if in.Attempts[0].Outcome != nil {
		t.Fatalf("first attempt %+v took an outcome it was never given", in.Attempts[0])
	}
	if len(lg.asked) != 0 {
		t.Fatalf("lookups %v after an answer that came", lg.asked)
	}
}

// TestLostAnswerLookedUpPastTheDeadlineExhausts: the policy judges a
// looked-up acceptance at the lookup's time, as after a crash, since the
// gateway may have accepted after the call gave up.
func TestLostAnswerLookedUpPastTheDeadlineExhausts(t *testing.T) {
	h := newHarness(t)
	lg := withLookup(h, map[string]ports.LookupResult{
		"la-4": {Answer: core.LookupKnown, Outcome: core.Outcome{Status: core.OutcomeAccepted}},
	}, nil)
	// The clock moves only once startLead saw the first refresh armed: a
	// minute earlier, the scheduler would arm it a minute later than
	// startLead waits for.
	started := make(chan struct{})
	lg.during = func(context.Context) error {
		<-started
		h.clock.Advance(time.Minute) // past the 30 s deadline
		return nil
	}
	h.on("la-4", lostAnswer)
	h.submit("la-4", smsDeadline, `{}`)
	h.startLead()
	close(started)
	in := h.waitStatus("la-4", core.StatusExhausted)
	if in.ExhaustedReason != core.ExhaustedDeadlineExceeded {
		t.Fatalf("exhausted as %s, want the deadline rule", in.ExhaustedReason)
	}
}

// TestLostAnswerLookupGivesUpAfterItsTimeout: a gateway that timed out the
// call may not answer its lookup either; the leader waits no longer than
// lostAnswerLookupTimeout (2 s) with the call's slot held, and the attempt
// stays in doubt.
func TestLostAnswerLookupGivesUpAfterItsTimeout(t *testing.T) {
	h := newHarness(t)
	lg := withLookup(h, nil, nil)
	asked := make(chan time.Time, 1)
	lg.during = func(ctx context.Context) error {
		asked <- h.clock.Now()
		<-ctx.Done()
		return ctx.Err()
	}
	h.on("la-5", lostAnswer, accepted)
	h.submit("la-5", smsMaxAttempts, `{}`)
	h.startLead()
	at := <-asked
	h.waitTimer(at.Add(2 * time.Second))
	h.clock.Advance(2 * time.Second)
	in := h.waitAttempts("la-5", 1)
	if a := in.Attempts[0]; !a.Sent || a.Outcome != nil || a.Error != lostAnswer.Err.Error() {
		t.Fatalf("first attempt %+v, want it left in doubt with its lost answer's error", a)
	}
}

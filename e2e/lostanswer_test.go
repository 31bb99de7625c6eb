package e2e

import (
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/client"
)

// TestAnswerLostAfterAcceptanceEndsAccepted runs the real gateway client,
// simulator and service: the gateway accepts, then drops the connection
// before answering, on the target with a one-second deadline. Every retry
// would be refused as duplicate_reference until the deadline exhausted the
// intent, although the message went out. The leader asks the gateway's
// lookup at once instead, and the intent ends accepted after one call.
func TestAnswerLostAfterAcceptanceEndsAccepted(t *testing.T) {
	svc, sim := startStandard(t)
	script(t, sim, "lost-answer-1", gatewaysim.Fault(gatewaysim.ModeAcceptThenDrop))
	mustCreate(t, svc.api, "lost-answer-1", "sms.deadline", `{"to":"+15550100","text":"hello"}`)
	in := waitTerminal(t, svc.api, "lost-answer-1")
	if in.Status != client.IntentStatusAccepted || in.FinalOutcome == nil || in.FinalOutcome.Status != client.OutcomeStatusAccepted {
		t.Fatalf("want accepted, got %+v", in)
	}
	if got := outcomes(in); len(got) != 1 || got[0] != "accepted" {
		t.Fatalf("attempts %v, want the one call, closed with the looked-up acceptance", got)
	}
	if in.PossiblyAccepted != nil && *in.PossiblyAccepted {
		t.Fatal("flagged possiblyAccepted although the lookup settled the acceptance")
	}
	if st := sim.Reference("lost-answer-1"); st.Submissions != 1 || st.Accepted != 1 {
		t.Fatalf("the gateway saw %d submissions and %d acceptances, want 1 and 1", st.Submissions, st.Accepted)
	}
}

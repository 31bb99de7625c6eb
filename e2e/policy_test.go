package e2e

import (
	"slices"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/client"
)

// outcomes lists each attempt's outcome as "accepted", the rejection reason,
// or "error" for an attempt without one.
func outcomes(in client.Intent) []string {
	out := make([]string, len(in.Attempts))
	for i, a := range in.Attempts {
		switch {
		case a.Outcome != nil && a.Outcome.Status == client.OutcomeStatusAccepted:
			out[i] = "accepted"
		case a.Outcome != nil && a.Outcome.Reason != nil:
			out[i] = *a.Outcome.Reason
		default:
			out[i] = "error"
		}
	}
	return out
}

// triedAttempts is in with only the attempts that reached for the
// gateway, as the API's sent says: those a leader closed because it lost
// its lease before the call or stopped first are left out.
func triedAttempts(in client.Intent) client.Intent {
	tried := in
	tried.Attempts = nil
	for _, a := range in.Attempts {
		if !a.Sent {
			continue
		}
		tried.Attempts = append(tried.Attempts, a)
	}
	return tried
}

// checkNumbering checks that attempts are numbered 1..n, each finished, in
// time order.
func checkNumbering(t *testing.T, in client.Intent) {
	t.Helper()
	for i, a := range in.Attempts {
		if a.Number != i+1 || a.FinishedAt == nil {
			t.Fatalf("attempt %d: %+v", i, a)
		}
		if i > 0 && a.StartedAt.Before(*in.Attempts[i-1].FinishedAt) {
			t.Fatalf("attempt %d started before attempt %d finished", a.Number, a.Number-1)
		}
	}
}

func testTerminalRejectionEndsTheIntent(t *testing.T, s store) {
	svc, sim := startStandard(t, s.database(t))
	script(t, sim, "reject-1", gatewaysim.Rejected("invalid_recipient"), gatewaysim.StepAccepted)
	mustCreate(t, svc.api, "reject-1", "sms.realtime", `{"to":"nobody"}`)
	in := waitTerminal(t, svc.api, "reject-1")
	if in.Status != client.IntentStatusRejected || in.FinalOutcome == nil ||
		in.FinalOutcome.Status != client.OutcomeStatusRejected || in.FinalOutcome.Reason == nil ||
		*in.FinalOutcome.Reason != "invalid_recipient" || in.ExhaustedReason != nil {
		t.Fatalf("want rejected with final outcome invalid_recipient, got %+v", in)
	}
	if got := outcomes(in); len(got) != 1 || got[0] != "invalid_recipient" {
		t.Fatalf("attempts %v, want one rejection and no retry", got)
	}
	if n := sim.Reference("reject-1").Submissions; n != 1 {
		t.Fatalf("the gateway saw %d submissions after a terminal rejection", n)
	}
}

func testRetryThenAcceptance(t *testing.T, s store) {
	svc, sim := startStandard(t, s.database(t))
	// duplicate_reference and unknown reasons are not terminal either.
	script(t, sim, "retry-1", gatewaysim.Rejected("provider_failure"), gatewaysim.Rejected("duplicate_reference"),
		gatewaysim.Fault(gatewaysim.HTTPStatusMode(503)), gatewaysim.StepAccepted)
	mustCreate(t, svc.api, "retry-1", "sms.realtime", `{"to":"+1"}`)
	in := waitTerminal(t, svc.api, "retry-1")
	if in.Status != client.IntentStatusAccepted || in.FinalOutcome == nil || in.FinalOutcome.Status != client.OutcomeStatusAccepted {
		t.Fatalf("want accepted, got %+v", in)
	}
	want := []string{"provider_failure", "duplicate_reference", "error", "accepted"}
	if got := outcomes(in); !slices.Equal(got, want) {
		t.Fatalf("attempts %v, want %v", got, want)
	}
	if a := in.Attempts[2]; a.Error == nil || *a.Error == "" || a.Outcome != nil {
		t.Fatalf("the 503 attempt should carry an error and no outcome: %+v", a)
	}
	checkNumbering(t, in)
	if gap := in.Attempts[1].StartedAt.Sub(*in.Attempts[0].FinishedAt); gap < e2eRetryDelay {
		t.Fatalf("retry after %s, before the %s retry delay", gap, e2eRetryDelay)
	}
}

func TestExhaustionByDeadline(t *testing.T) {
	svc, sim := startStandard(t)
	script(t, sim, "deadline-1", repeat(gatewaysim.Rejected("provider_failure"), 200)...)
	mustCreate(t, svc.api, "deadline-1", "sms.deadline", `{}`) // maxAcceptanceSeconds: 1
	in := waitTerminal(t, svc.api, "deadline-1")
	if in.Status != client.IntentStatusExhausted || in.ExhaustedReason == nil ||
		*in.ExhaustedReason != client.DeadlineExceeded || in.FinalOutcome != nil {
		t.Fatalf("want exhausted by deadline_exceeded without final outcome, got %+v", in)
	}
	if len(in.Attempts) < 2 {
		t.Fatalf("only %d attempts: the deadline policy retries until the deadline", len(in.Attempts))
	}
	checkNumbering(t, in)
	// Retries stop at the deadline: no submission beyond the recorded
	// attempts that were sent. (An attempt due just before the deadline may
	// start a little after it; only its due time is bound by the deadline.
	// One whose call would have come after the deadline is recorded unsent.)
	sent := len(triedAttempts(in).Attempts)
	if n := sim.Reference("deadline-1").Submissions; n != sent {
		t.Fatalf("the gateway saw %d submissions for %d attempts sent (%d recorded)", n, sent, len(in.Attempts))
	}
}

func testExhaustionByMaxAttempts(t *testing.T, s store) {
	svc, sim := startStandard(t, s.database(t))
	script(t, sim, "max-1", repeat(gatewaysim.Rejected("provider_failure"), 10)...)
	mustCreate(t, svc.api, "max-1", "sms.batch", `{}`) // maxAttempts: 3
	in := waitTerminal(t, svc.api, "max-1")
	if in.Status != client.IntentStatusExhausted || in.ExhaustedReason == nil || *in.ExhaustedReason != client.MaxAttemptsReached {
		t.Fatalf("want exhausted by max_attempts_reached, got %+v", in)
	}
	if c := in.Contract; c.Policy != client.MaxAttempts || c.MaxAttempts == nil || *c.MaxAttempts != 3 || c.MaxAcceptanceSeconds != nil {
		t.Fatalf("contract %+v", c)
	}
	// A leader that lost its lease between a reservation and its call (a
	// loaded machine can make a renewal late) closed that attempt as never
	// submitted: it spent no try, and the tries are still exactly three.
	if got := outcomes(triedAttempts(in)); !slices.Equal(got, []string{"provider_failure", "provider_failure", "provider_failure"}) {
		t.Fatalf("tries %v, want exactly three", got)
	}
	checkNumbering(t, in)
	if n := sim.Reference("max-1").Submissions; n != 3 {
		t.Fatalf("the gateway saw %d submissions, want 3", n)
	}
}

func TestExhaustionOfOneShot(t *testing.T) {
	svc, sim := startStandard(t)
	script(t, sim, "oneshot-1", gatewaysim.Rejected("provider_failure"), gatewaysim.StepAccepted)
	mustCreate(t, svc.api, "oneshot-1", "push.oneshot", `{"token":"t"}`)
	in := waitTerminal(t, svc.api, "oneshot-1")
	if in.Status != client.IntentStatusExhausted || in.ExhaustedReason == nil || *in.ExhaustedReason != client.OneShotCompleted {
		t.Fatalf("want exhausted by one_shot_completed, got %+v", in)
	}
	if c := in.Contract; c.Policy != client.OneShot || c.MaxAttempts != nil || c.MaxAcceptanceSeconds != nil || c.GatewayType != client.Push {
		t.Fatalf("contract %+v", c)
	}
	if got := outcomes(in); !slices.Equal(got, []string{"provider_failure"}) {
		t.Fatalf("attempts %v, want one", got)
	}
}

package core

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

var (
	policyCreatedAt = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	policyDelay     = 5 * time.Second

	deadlineContract = Contract{
		SubmissionTarget: "sms.realtime", GatewayType: GatewaySMS, GatewayURL: "http://gw", Mode: ModeRealtime,
		Policy: PolicyDeadline, MaxAcceptanceSeconds: 30,
		TerminalOutcomes: []string{ReasonInvalidRequest, ReasonInvalidRecipient},
	}
	maxAttemptsContract = Contract{
		SubmissionTarget: "sms.batch", GatewayType: GatewaySMS, GatewayURL: "http://gw", Mode: ModeBatch,
		Policy: PolicyMaxAttempts, MaxAttempts: 3,
		TerminalOutcomes: []string{ReasonInvalidRequest, ReasonInvalidRecipient},
	}
	oneShotContract = Contract{
		SubmissionTarget: "push.oneshot", GatewayType: GatewayPush, GatewayURL: "http://gw", Mode: ModeBatch,
		Policy: PolicyOneShot, TerminalOutcomes: []string{ReasonInvalidRequest, ReasonUnregisteredToken},
	}
)

func accepted() AttemptResult {
	return AttemptResult{Outcome: &Outcome{Status: OutcomeAccepted, MessageID: "m-1"}}
}

func rejected(reason string) AttemptResult {
	return AttemptResult{Outcome: &Outcome{Status: OutcomeRejected, Reason: reason}}
}

func transportError() AttemptResult {
	return AttemptResult{Err: errors.New("dial tcp 127.0.0.1:8080: connection refused")}
}

// at returns the instant d after the policy tests' creation time.
func at(d time.Duration) time.Time { return policyCreatedAt.Add(d) }

func TestDecide(t *testing.T) {
	pending := func(d time.Duration) Decision { return Decision{Status: StatusPending, NextDueAt: at(d)} }
	exhausted := func(r ExhaustedReason) Decision { return Decision{Status: StatusExhausted, ExhaustedReason: r} }
	final := func(s IntentStatus, o Outcome) Decision { return Decision{Status: s, FinalOutcome: &o} }
	lateAcceptance := func(messageID string) Decision {
		return Decision{Status: StatusExhausted, ExhaustedReason: ExhaustedDeadlineExceeded,
			AcceptedAfterDeadline: true, AcceptedMessageID: messageID}
	}
	acceptedOutcome := Outcome{Status: OutcomeAccepted, MessageID: "m-1"}

	tests := []struct {
		name     string
		contract Contract
		attempts int
		finished time.Duration // after creation
		result   AttemptResult
		want     Decision
	}{
		// Accepted ends the intent; under deadline only strictly before it.
		{"deadline: accepted before the deadline", deadlineContract, 4, 30*time.Second - time.Nanosecond, accepted(), final(StatusAccepted, acceptedOutcome)},
		// An acceptance at or after the deadline exhausts, as the spec says,
		// and the decision keeps the fact and the gateway's message id.
		{"deadline: accepted exactly at the deadline", deadlineContract, 4, 30 * time.Second, accepted(), lateAcceptance("m-1")},
		{"deadline: accepted after the deadline", deadlineContract, 4, time.Hour, accepted(), lateAcceptance("m-1")},
		{"deadline: accepted after the deadline without a message id", deadlineContract, 4, time.Hour,
			AttemptResult{Outcome: &Outcome{Status: OutcomeAccepted}}, lateAcceptance("")},
		{"max_attempts: accepted on the last attempt", maxAttemptsContract, 3, time.Hour, accepted(), final(StatusAccepted, acceptedOutcome)},
		{"max_attempts: accepted on the first attempt", maxAttemptsContract, 1, 0, accepted(), final(StatusAccepted, acceptedOutcome)},
		{"one_shot: accepted", oneShotContract, 1, time.Hour, accepted(), final(StatusAccepted, acceptedOutcome)},

		// A rejection listed in terminalOutcomes rejects, whatever the policy
		// and the time: the deadline bounds acceptance, not rejection.
		{"deadline: terminal rejection", deadlineContract, 1, time.Second, rejected(ReasonInvalidRecipient), final(StatusRejected, Outcome{Status: OutcomeRejected, Reason: ReasonInvalidRecipient})},
		{"deadline: terminal rejection after the deadline", deadlineContract, 9, time.Hour, rejected(ReasonInvalidRequest), final(StatusRejected, Outcome{Status: OutcomeRejected, Reason: ReasonInvalidRequest})},
		{"max_attempts: terminal rejection before the last attempt", maxAttemptsContract, 1, time.Second, rejected(ReasonInvalidRequest), final(StatusRejected, Outcome{Status: OutcomeRejected, Reason: ReasonInvalidRequest})},
		{"one_shot: terminal rejection", oneShotContract, 1, time.Second, rejected(ReasonUnregisteredToken), final(StatusRejected, Outcome{Status: OutcomeRejected, Reason: ReasonUnregisteredToken})},

		// Non-terminal rejections retry while the policy allows.
		{"deadline: non-terminal rejection retries after the delay", deadlineContract, 1, 10 * time.Second, rejected(ReasonProviderFailure), pending(15 * time.Second)},
		{"deadline: next due 1ns before the deadline retries", deadlineContract, 5, 25*time.Second - time.Nanosecond, rejected(ReasonProviderFailure), pending(30*time.Second - time.Nanosecond)},
		{"deadline: next due exactly at the deadline exhausts", deadlineContract, 5, 25 * time.Second, rejected(ReasonProviderFailure), exhausted(ExhaustedDeadlineExceeded)},
		{"deadline: next due after the deadline exhausts", deadlineContract, 5, 29 * time.Second, rejected(ReasonProviderFailure), exhausted(ExhaustedDeadlineExceeded)},
		{"max_attempts: first of three retries", maxAttemptsContract, 1, time.Second, rejected(ReasonProviderFailure), pending(6 * time.Second)},
		{"max_attempts: second of three retries", maxAttemptsContract, 2, time.Minute, rejected(ReasonProviderFailure), pending(time.Minute + 5*time.Second)},
		{"max_attempts: third of three exhausts", maxAttemptsContract, 3, time.Minute, rejected(ReasonProviderFailure), exhausted(ExhaustedMaxAttempts)},
		{"max_attempts: beyond the bound exhausts", maxAttemptsContract, 7, time.Minute, rejected(ReasonProviderFailure), exhausted(ExhaustedMaxAttempts)},
		{"max_attempts: the deadline does not apply", maxAttemptsContract, 2, 1000 * time.Hour, rejected(ReasonProviderFailure), pending(1000*time.Hour + 5*time.Second)},
		{"one_shot: non-terminal rejection exhausts", oneShotContract, 1, time.Second, rejected(ReasonProviderFailure), exhausted(ExhaustedOneShotCompleted)},

		// duplicate_reference, reasons outside the taxonomy and reasons of
		// the other gateway type are non-terminal unless listed.
		{"max_attempts: duplicate_reference is non-terminal", maxAttemptsContract, 1, 0, rejected(ReasonDuplicateReference), pending(5 * time.Second)},
		{"deadline: duplicate_reference is non-terminal", deadlineContract, 1, 0, rejected(ReasonDuplicateReference), pending(5 * time.Second)},
		{"one_shot: duplicate_reference exhausts", oneShotContract, 1, 0, rejected(ReasonDuplicateReference), exhausted(ExhaustedOneShotCompleted)},
		{"max_attempts: unknown reason is non-terminal", maxAttemptsContract, 1, 0, rejected("rate_limited"), pending(5 * time.Second)},
		{"max_attempts: push reason on sms is non-terminal", maxAttemptsContract, 1, 0, rejected(ReasonUnregisteredToken), pending(5 * time.Second)},
		{"max_attempts: reasons match exactly", maxAttemptsContract, 1, 0, rejected("INVALID_REQUEST"), pending(5 * time.Second)},

		// Invalid answers are attempt errors (NewOutcome refuses them where
		// they enter the core): never terminal.
		{"max_attempts: missing status", maxAttemptsContract, 1, 0, invalidAnswer("", ""), pending(5 * time.Second)},
		{"max_attempts: rejected without reason", maxAttemptsContract, 1, 0, invalidAnswer(OutcomeRejected, ""), pending(5 * time.Second)},
		{"max_attempts: unknown status", maxAttemptsContract, 1, 0, invalidAnswer("queued", ""), pending(5 * time.Second)},
		{"max_attempts: status case matters", maxAttemptsContract, 1, 0, invalidAnswer("ACCEPTED", ""), pending(5 * time.Second)},
		{"max_attempts: invalid outcome on the last attempt", maxAttemptsContract, 3, 0, invalidAnswer(OutcomeRejected, ""), exhausted(ExhaustedMaxAttempts)},
		{"one_shot: invalid outcome exhausts", oneShotContract, 1, 0, invalidAnswer("queued", ""), exhausted(ExhaustedOneShotCompleted)},
		{"deadline: invalid outcome near the deadline", deadlineContract, 2, 26 * time.Second, invalidAnswer("", ""), exhausted(ExhaustedDeadlineExceeded)},

		// Transport errors are non-terminal, and an error wins over an
		// outcome given alongside it.
		{"deadline: transport error retries", deadlineContract, 1, 0, transportError(), pending(5 * time.Second)},
		{"max_attempts: transport error retries", maxAttemptsContract, 2, 0, transportError(), pending(5 * time.Second)},
		{"max_attempts: transport error on the last attempt", maxAttemptsContract, 3, 0, transportError(), exhausted(ExhaustedMaxAttempts)},
		{"one_shot: transport error exhausts", oneShotContract, 1, 0, transportError(), exhausted(ExhaustedOneShotCompleted)},
		{"max_attempts: error beside an accepted outcome", maxAttemptsContract, 1, 0, AttemptResult{Outcome: &Outcome{Status: OutcomeAccepted}, Err: errors.New("read: reset")}, pending(5 * time.Second)},
		{"max_attempts: neither outcome nor error", maxAttemptsContract, 1, 0, AttemptResult{}, pending(5 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.contract, policyCreatedAt, tt.attempts, at(tt.finished), tt.result, policyDelay)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Decide = %s, want %s", describeDecision(got), describeDecision(tt.want))
			}
			checkDecisionShape(t, got)
		})
	}
}

// checkDecisionShape asserts the spec's field rules: FinalOutcome only for
// accepted and rejected, ExhaustedReason only for exhausted, NextDueAt only
// for pending.
func checkDecisionShape(t *testing.T, d Decision) {
	t.Helper()
	if hasFinal := d.FinalOutcome != nil; hasFinal != (d.Status == StatusAccepted || d.Status == StatusRejected) {
		t.Errorf("%s: FinalOutcome set=%v", describeDecision(d), hasFinal)
	}
	if d.FinalOutcome != nil && string(d.FinalOutcome.Status) != string(d.Status) {
		t.Errorf("%s: final outcome status differs from the intent status", describeDecision(d))
	}
	if hasReason := d.ExhaustedReason != ""; hasReason != (d.Status == StatusExhausted) {
		t.Errorf("%s: ExhaustedReason set=%v", describeDecision(d), hasReason)
	}
	if hasDue := !d.NextDueAt.IsZero(); hasDue != (d.Status == StatusPending) {
		t.Errorf("%s: NextDueAt set=%v", describeDecision(d), hasDue)
	}
}

func describeDecision(d Decision) string {
	var b strings.Builder
	b.WriteString(string(d.Status))
	if d.FinalOutcome != nil {
		b.WriteString(" final=" + string(d.FinalOutcome.Status) + "/" + d.FinalOutcome.Reason + "/" + d.FinalOutcome.MessageID)
	}
	if d.ExhaustedReason != "" {
		b.WriteString(" exhausted=" + string(d.ExhaustedReason))
	}
	if d.AcceptedAfterDeadline {
		b.WriteString(" accepted-after-deadline=" + d.AcceptedMessageID)
	}
	if !d.NextDueAt.IsZero() {
		b.WriteString(" next=+" + d.NextDueAt.Sub(policyCreatedAt).String())
	}
	return b.String()
}

func TestDecideCopiesTheFinalOutcome(t *testing.T) {
	o := &Outcome{Status: OutcomeRejected, Reason: ReasonInvalidRequest}
	d := Decide(maxAttemptsContract, policyCreatedAt, 1, policyCreatedAt, AttemptResult{Outcome: o}, policyDelay)
	o.Reason = ReasonProviderFailure
	if d.FinalOutcome == o || d.FinalOutcome.Reason != ReasonInvalidRequest {
		t.Errorf("FinalOutcome aliases the gateway's outcome: %+v", d.FinalOutcome)
	}
}

func TestDecideUsesTheRetryDelayItIsGiven(t *testing.T) {
	for _, delay := range []time.Duration{0, time.Millisecond, DefaultRetryDelay, time.Hour} {
		d := Decide(maxAttemptsContract, policyCreatedAt, 1, at(time.Minute), rejected(ReasonProviderFailure), delay)
		if want := at(time.Minute + delay); d.Status != StatusPending || !d.NextDueAt.Equal(want) {
			t.Errorf("delay %v: Decide = %s, want pending at %v", delay, describeDecision(d), want)
		}
	}
}

func TestFixedDelayIsTheSameAfterEveryAttempt(t *testing.T) {
	var p RetryPolicy = FixedDelay(DefaultRetryDelay)
	for n := 1; n <= 10; n++ {
		if got := p.Delay(n); got != 5*time.Second {
			t.Errorf("Delay(%d) = %v, want the spec's fixed 5s", n, got)
		}
	}
}

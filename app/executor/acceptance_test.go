package executor_test

// The acceptance cases of the Phase 2 spec ("Validation and Acceptance")
// whose subject is the executor, one test each, run against the executor
// over the in-memory store with a fake clock. The cases about the intake
// service (02 and 11, conflicts; the halves of 01 and 09 about repeats and
// registry edits) are in app/intake's acceptance_test.go.

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Spec: same intentId + same payload returns the existing intent without
// duplication. The executor's half: a repeat starts no attempt. Intake
// hands the executor only created intents; an ended intent the executor
// hears of again (a late or doubled notification) gets no further call.
func TestAcceptance01_AnEndedIntentGetsNoFurtherAttempt(t *testing.T) {
	h := newHarness(t)
	mark, _ := h.metrics.inFlightReports()
	h.startLead()
	h.on("i-1", accepted)

	first := h.submit("i-1", smsDeadline, `{"to": "+15550100", "text": "hi"}`)
	h.waitStatus("i-1", core.StatusAccepted)
	h.awaitIdle(mark, t0.Add(h.refreshInterval())) // its result taken in: i-1 is no longer in flight

	// The intent as it was created, pending: the executor dispatches it,
	// and its reservation finds the intent ended.
	mark, _ = h.metrics.inFlightReports()
	h.executor.Notify(first)
	h.awaitIdle(mark, t0.Add(h.refreshInterval()))
	h.settle(time.Minute)
	if n := h.gw.CallCount(); n != 1 {
		t.Fatalf("gateway called %d times, want 1: an ended intent starts no attempt", n)
	}
	if in := mustGet(h, "i-1"); in.Status != core.StatusAccepted || !in.CreatedAt.Equal(t0) || in.AttemptCount != 1 {
		t.Fatalf("intent %+v, want accepted, created at t0, with 1 attempt", in)
	}
}

// Spec: a terminal rejection ends the intent as REJECTED without retries.
func TestAcceptance03_TerminalRejectionEndsRejectedWithoutRetry(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.on("i-1", rejected(core.ReasonInvalidRecipient))
	h.submit("i-1", smsDeadline, `{}`)

	in := h.waitStatus("i-1", core.StatusRejected)
	if in.FinalOutcome == nil || in.FinalOutcome.Reason != core.ReasonInvalidRecipient || in.ExhaustedReason != "" {
		t.Fatalf("rejected intent: final=%+v exhausted=%q", in.FinalOutcome, in.ExhaustedReason)
	}
	if !in.NextDueAt.IsZero() || in.AttemptCount != 1 {
		t.Fatalf("rejected intent: nextDueAt=%v attempts=%d, want none due after 1 attempt", in.NextDueAt, in.AttemptCount)
	}
	h.settle(time.Minute)
	if n := h.gw.CallCount(); n != 1 {
		t.Fatalf("gateway called %d times, want 1", n)
	}
	if err := h.stopLead(); err != nil {
		t.Fatal(err)
	}
	completed, _, _ := h.metrics.snapshot() // Lead has returned: every worker reported
	if !slices.Equal(completed, []string{"sms.realtime rejected invalid_recipient"}) {
		t.Fatalf("IntentCompleted events %v", completed)
	}
}

// Spec: a retryable rejection schedules another attempt and eventually
// ACCEPTED when the gateway returns accepted.
func TestAcceptance04_RetryableRejectionRetriesUntilAccepted(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.on("i-1", providerFailure, providerFailure, accepted)
	h.submit("i-1", smsDeadline, `{}`)

	for n := 1; n <= 2; n++ {
		in := h.waitAttempts("i-1", n)
		if in.Status != core.StatusPending {
			t.Fatalf("after attempt %d: status %s, want pending", n, in.Status)
		}
		h.waitTimer(in.NextDueAt)
		h.clock.AdvanceTo(in.NextDueAt)
	}
	in := h.waitStatus("i-1", core.StatusAccepted)
	if in.AttemptCount != 3 || in.FinalOutcome == nil || in.FinalOutcome.MessageID != "m-1" {
		t.Fatalf("accepted intent: attempts=%d final=%+v", in.AttemptCount, in.FinalOutcome)
	}
	for i, a := range in.Attempts[:2] {
		if a.Outcome == nil || a.Outcome.Reason != core.ReasonProviderFailure || a.Error != "" {
			t.Fatalf("attempt %d recorded %+v, want the provider_failure rejection as a fact", i+1, a)
		}
	}
	if err := h.stopLead(); err != nil {
		t.Fatal(err)
	}
	_, attempts, _ := h.metrics.snapshot() // Lead has returned: every worker reported
	if !slices.Equal(attempts, []string{"sms rejected", "sms rejected", "sms accepted"}) {
		t.Fatalf("AttemptFinished events %v", attempts)
	}
}

// Spec: a deadline policy intent that completes after the acceptance
// deadline results in EXHAUSTED.
func TestAcceptance05_AcceptanceAfterTheDeadlineIsExhausted(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	hold := make(chan struct{})
	h.on("i-1", accepted.HeldUntil(hold))
	h.submit("i-1", smsDeadline, `{}`)

	h.waitCall()
	h.clock.Advance(time.Duration(smsDeadline.MaxAcceptanceSeconds) * time.Second) // exactly at the deadline
	close(hold)

	in := h.waitStatus("i-1", core.StatusExhausted)
	if in.ExhaustedReason != core.ExhaustedDeadlineExceeded || in.FinalOutcome != nil {
		t.Fatalf("exhausted=%q final=%+v, want deadline_exceeded and no final outcome", in.ExhaustedReason, in.FinalOutcome)
	}
	if a := in.Attempts[0]; a.Outcome == nil || a.Outcome.Status != core.OutcomeAccepted {
		t.Fatalf("the late acceptance is not recorded as the attempt's fact: %+v", a)
	}
}

// Spec: a max_attempts policy intent exhausts after the configured attempt
// count.
func TestAcceptance06_MaxAttemptsExhaustsAfterConfiguredCount(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.on("i-1", providerFailure, providerFailure, providerFailure)
	h.submit("i-1", smsMaxAttempts, `{}`)

	for n := 1; n < smsMaxAttempts.MaxAttempts; n++ {
		in := h.waitAttempts("i-1", n)
		h.waitTimer(in.NextDueAt)
		h.clock.AdvanceTo(in.NextDueAt)
	}
	in := h.waitStatus("i-1", core.StatusExhausted)
	if in.ExhaustedReason != core.ExhaustedMaxAttempts || in.AttemptCount != smsMaxAttempts.MaxAttempts {
		t.Fatalf("exhausted=%q after %d attempts, want max_attempts_reached after %d",
			in.ExhaustedReason, in.AttemptCount, smsMaxAttempts.MaxAttempts)
	}
	h.settle(time.Minute) // the script has no fourth reply: a fourth call fails the test
	if n := h.gw.CallCount(); n != smsMaxAttempts.MaxAttempts {
		t.Fatalf("gateway called %d times", n)
	}
}

// Spec: a one_shot policy intent exhausts after a non-terminal rejection.
func TestAcceptance07_OneShotExhaustsAfterNonTerminalRejection(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.on("i-1", providerFailure)
	h.submit("i-1", pushOneShot, `{}`)

	in := h.waitStatus("i-1", core.StatusExhausted)
	if in.ExhaustedReason != core.ExhaustedOneShotCompleted || in.AttemptCount != 1 || in.FinalOutcome != nil {
		t.Fatalf("one-shot intent: %+v", in)
	}
	h.settle(time.Minute)
	if n := h.gw.CallCount(); n != 1 {
		t.Fatalf("gateway called %d times, want 1", n)
	}
}

// Spec: a duplicate_reference outcome is treated as non-terminal and does
// not complete the intent.
func TestAcceptance08_DuplicateReferenceIsNonTerminal(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.on("i-1", rejected(core.ReasonDuplicateReference), accepted)
	h.submit("i-1", smsDeadline, `{}`)

	in := h.waitAttempts("i-1", 1)
	if in.Status != core.StatusPending || in.FinalOutcome != nil {
		t.Fatalf("after duplicate_reference: status %s final %+v, want pending", in.Status, in.FinalOutcome)
	}
	if o := in.Attempts[0].Outcome; o == nil || o.Reason != core.ReasonDuplicateReference {
		t.Fatalf("the duplicate_reference outcome is not recorded: %+v", in.Attempts[0])
	}
	h.waitTimer(in.NextDueAt)
	h.clock.AdvanceTo(in.NextDueAt)
	h.waitStatus("i-1", core.StatusAccepted)
	calls := h.gw.CallsFor("i-1")
	if len(calls) != 2 || calls[1].Params.Reference != "i-1" {
		t.Fatalf("calls %+v: the retry must carry the same reference", calls)
	}
}

// Spec: a contract snapshot remains unchanged even if the registry is
// modified after submission. The executor's half: it runs the intent under
// its stored snapshot. The registry is none of its inputs (Config has no
// registry), so an edit cannot reach it; intake's half checks that an edit
// changes new intents only. Under the snapshot the intent is retried to
// max_attempts, and executing it leaves the snapshot as stored.
func TestAcceptance09_ExecutorRunsTheStoredSnapshot(t *testing.T) {
	h := newHarness(t)
	h.submit("i-1", smsMaxAttempts, `{}`)

	h.on("i-1", providerFailure, providerFailure, providerFailure)
	h.startLead()
	for n := 1; n < smsMaxAttempts.MaxAttempts; n++ {
		in := h.waitAttempts("i-1", n)
		h.waitTimer(in.NextDueAt)
		h.clock.AdvanceTo(in.NextDueAt)
	}
	in := h.waitStatus("i-1", core.StatusExhausted)
	if in.ExhaustedReason != core.ExhaustedMaxAttempts || in.AttemptCount != 3 {
		t.Fatalf("did not run under the snapshot: %s/%s after %d attempts", in.Status, in.ExhaustedReason, in.AttemptCount)
	}
	if got, _ := json.Marshal(in.Contract); string(got) != mustJSON(t, smsMaxAttempts) {
		t.Fatalf("stored snapshot %s, want %s", got, mustJSON(t, smsMaxAttempts))
	}
}

// Spec: a routing change in the registry after submission does not affect
// the stored contract snapshot or executor inputs: every call of the intent
// goes where its snapshot says, retries included.
func TestAcceptance10_RoutingChangeDoesNotAffectExecutorInputs(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.on("i-1", providerFailure, accepted)
	h.submit("i-1", smsDeadline, `{"to":"1"}`)
	in := h.waitAttempts("i-1", 1)

	h.waitTimer(in.NextDueAt)
	h.clock.AdvanceTo(in.NextDueAt)
	in = h.waitStatus("i-1", core.StatusAccepted)
	calls := h.gw.CallsFor("i-1")
	for i, c := range calls {
		want := ports.SubmitParams{GatewayType: core.GatewaySMS, GatewayURL: "http://sms-a.test", Reference: "i-1", Payload: []byte(`{"to":"1"}`)}
		if c.Params.GatewayType != want.GatewayType || c.Params.GatewayURL != want.GatewayURL ||
			c.Params.Reference != want.Reference || string(c.Params.Payload) != string(want.Payload) {
			t.Fatalf("call %d got %+v, want the snapshot's routing %+v", i+1, c.Params, want)
		}
	}
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2", len(calls))
	}
	if in.Contract.GatewayURL != "http://sms-a.test" || in.Contract.GatewayType != core.GatewaySMS {
		t.Fatalf("stored snapshot changed: %+v", in.Contract)
	}
}

// Spec: retry scheduling uses the fixed 5 second delay (and this delay is
// not surfaced as contract semantics).
func TestAcceptance12_RetryUsesFixedFiveSecondDelay(t *testing.T) {
	h := newHarness(t) // Config.Retry left nil: the default policy
	h.startLead()
	h.on("i-1", providerFailure, accepted)
	h.submit("i-1", smsDeadline, `{}`)

	in := h.waitAttempts("i-1", 1)
	finished := in.Attempts[0].FinishedAt
	if want := finished.Add(5 * time.Second); !in.NextDueAt.Equal(want) {
		t.Fatalf("next due %v after the attempt finished, want exactly 5s", in.NextDueAt.Sub(finished))
	}
	h.waitTimer(in.NextDueAt)

	h.settle(5*time.Second - time.Nanosecond)
	if _, last := h.metrics.inFlightReports(); last != 0 || h.gw.CallCount() != 1 {
		t.Fatalf("an attempt started before the 5 s delay had passed")
	}
	// settle returns once the next refresh is armed; the retry's timer is
	// armed after it, from the time read before both.
	h.waitTimer(in.NextDueAt)
	h.clock.AdvanceTo(in.NextDueAt)
	in = h.waitStatus("i-1", core.StatusAccepted)
	if got := in.Attempts[1].StartedAt.Sub(in.Attempts[0].FinishedAt); got != 5*time.Second {
		t.Fatalf("attempt 2 started %v after attempt 1 finished, want 5s", got)
	}
	if strings.Contains(strings.ToLower(mustJSON(t, in.Contract)), "retry") ||
		strings.Contains(strings.ToLower(mustJSON(t, in.Contract)), "delay") {
		t.Fatalf("the contract representation mentions retry timing: %s", mustJSON(t, in.Contract))
	}
	if core.DefaultRetryDelay != 5*time.Second {
		t.Fatalf("DefaultRetryDelay = %v", core.DefaultRetryDelay)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

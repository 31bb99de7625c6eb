package executor_test

// The twelve acceptance cases of the Phase 2 spec ("Validation and
// Acceptance"), one test each, run against the executor and intake service over the
// in-memory store with a fake clock.

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Spec: same intentId + same payload returns the existing intent without
// duplication.
func TestAcceptance01_RepeatReturnsExistingIntentWithoutDuplication(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.gw.on("i-1", accepted)

	first := h.submit("i-1", smsDeadline, `{"to": "+15550100", "text": "hi"}`)
	if !first.Created {
		t.Fatal("the first submission did not create the intent")
	}
	h.waitStatus("i-1", core.StatusAccepted)
	h.clock.Advance(time.Second)

	// Same payload, different formatting: the compacted bytes are equal.
	again := h.submit("i-1", smsDeadline, "{\"to\":\"+15550100\",\n \"text\":\"hi\"}")
	if again.Created {
		t.Fatal("a repeat created a second intent")
	}
	if again.Intent.Status != core.StatusAccepted || !again.Intent.CreatedAt.Equal(t0) || again.Intent.AttemptCount != 1 {
		t.Fatalf("repeat returned %+v, want the existing accepted intent created at t0 with 1 attempt", again.Intent)
	}
	h.settle(time.Minute)
	if n := h.gw.callCount(); n != 1 {
		t.Fatalf("gateway called %d times, want 1: a repeat starts no attempt", n)
	}
	if n := h.metrics.created[smsDeadline.SubmissionTarget]; n != 1 {
		t.Fatalf("IntentCreated counted %d, want 1", n)
	}
}

// Spec: same intentId + different payload or target returns an idempotency
// conflict error.
func TestAcceptance02_DifferentPayloadOrTargetIsConflict(t *testing.T) {
	h := newHarness(t)
	h.submit("i-1", smsDeadline, `{"text":"hi"}`)
	cases := []struct {
		name    string
		target  core.Contract
		payload string
		fields  []core.ConflictField
	}{
		{"payload", smsDeadline, `{"text":"bye"}`, []core.ConflictField{core.ConflictPayload}},
		{"key order is a different payload", smsDeadline, `{"text":"hi","x":1}`, []core.ConflictField{core.ConflictPayload}},
		{"target", smsMaxAttempts, `{"text":"hi"}`, []core.ConflictField{core.ConflictSubmissionTarget}},
		{"both", pushBatch, `{"text":"bye"}`, []core.ConflictField{core.ConflictSubmissionTarget, core.ConflictPayload}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.service.SubmitIntent(h.ctx, ports.SubmitIntentParams{
				IntentID: "i-1", SubmissionTarget: tc.target.SubmissionTarget, Payload: []byte(tc.payload),
			})
			var conflict *core.IdempotencyConflictError
			if !errors.As(err, &conflict) {
				t.Fatalf("err = %v, want *core.IdempotencyConflictError", err)
			}
			if !slices.Equal(conflict.ConflictingFields, tc.fields) {
				t.Fatalf("conflicting fields %v, want %v", conflict.ConflictingFields, tc.fields)
			}
		})
	}
	in, err := h.service.GetIntent(h.ctx, "i-1")
	if err != nil || string(in.Payload) != `{"text":"hi"}` || in.SubmissionTarget != smsDeadline.SubmissionTarget {
		t.Fatalf("the existing intent changed: %+v, %v", in, err)
	}
}

// Spec: a terminal rejection ends the intent as REJECTED without retries.
func TestAcceptance03_TerminalRejectionEndsRejectedWithoutRetry(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.gw.on("i-1", rejected(core.ReasonInvalidRecipient))
	h.submit("i-1", smsDeadline, `{}`)

	in := h.waitStatus("i-1", core.StatusRejected)
	if in.FinalOutcome == nil || in.FinalOutcome.Reason != core.ReasonInvalidRecipient || in.ExhaustedReason != "" {
		t.Fatalf("rejected intent: final=%+v exhausted=%q", in.FinalOutcome, in.ExhaustedReason)
	}
	if !in.NextDueAt.IsZero() || in.AttemptCount != 1 {
		t.Fatalf("rejected intent: nextDueAt=%v attempts=%d, want none due after 1 attempt", in.NextDueAt, in.AttemptCount)
	}
	h.settle(time.Minute)
	if n := h.gw.callCount(); n != 1 {
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
	h.gw.on("i-1", providerFailure, providerFailure, accepted)
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
	h.gw.on("i-1", reply{outcome: accepted.outcome, hold: hold})
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
	h.gw.on("i-1", providerFailure, providerFailure, providerFailure)
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
	if n := h.gw.callCount(); n != smsMaxAttempts.MaxAttempts {
		t.Fatalf("gateway called %d times", n)
	}
}

// Spec: a one_shot policy intent exhausts after a non-terminal rejection.
func TestAcceptance07_OneShotExhaustsAfterNonTerminalRejection(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.gw.on("i-1", providerFailure)
	h.submit("i-1", pushOneShot, `{}`)

	in := h.waitStatus("i-1", core.StatusExhausted)
	if in.ExhaustedReason != core.ExhaustedOneShotCompleted || in.AttemptCount != 1 || in.FinalOutcome != nil {
		t.Fatalf("one-shot intent: %+v", in)
	}
	h.settle(time.Minute)
	if n := h.gw.callCount(); n != 1 {
		t.Fatalf("gateway called %d times, want 1", n)
	}
}

// Spec: a duplicate_reference outcome is treated as non-terminal and does
// not complete the intent.
func TestAcceptance08_DuplicateReferenceIsNonTerminal(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.gw.on("i-1", rejected(core.ReasonDuplicateReference), accepted)
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
	calls := h.gw.callsFor("i-1")
	if len(calls) != 2 || calls[1].params.Reference != "i-1" {
		t.Fatalf("calls %+v: the retry must carry the same reference", calls)
	}
}

// Spec: a contract snapshot remains unchanged even if the registry is
// modified after submission.
func TestAcceptance09_SnapshotUnchangedAfterRegistryChange(t *testing.T) {
	h := newHarness(t)
	h.submit("i-1", smsMaxAttempts, `{}`)

	edited := smsMaxAttempts.Clone()
	edited.Policy, edited.MaxAttempts = core.PolicyOneShot, 0
	edited.TerminalOutcomes = []string{core.ReasonProviderFailure}
	h.useRegistry(smsDeadline, edited, pushOneShot, pushBatch)

	h.gw.on("i-1", providerFailure, providerFailure, providerFailure)
	h.startLead()
	for n := 1; n < smsMaxAttempts.MaxAttempts; n++ {
		in := h.waitAttempts("i-1", n)
		h.waitTimer(in.NextDueAt)
		h.clock.AdvanceTo(in.NextDueAt)
	}
	in := h.waitStatus("i-1", core.StatusExhausted)
	// Under the edited contract the first provider_failure would have
	// rejected it; under the snapshot it is retried to max_attempts.
	if in.ExhaustedReason != core.ExhaustedMaxAttempts || in.AttemptCount != 3 {
		t.Fatalf("ran under the edited contract: %s/%s after %d attempts", in.Status, in.ExhaustedReason, in.AttemptCount)
	}
	if got, _ := json.Marshal(in.Contract); string(got) != mustJSON(t, smsMaxAttempts) {
		t.Fatalf("stored snapshot %s, want %s", got, mustJSON(t, smsMaxAttempts))
	}
	if c, _ := h.service.Target(smsMaxAttempts.SubmissionTarget); c.Policy != core.PolicyOneShot {
		t.Fatalf("the registry edit did not take effect for new intents: %+v", c)
	}
}

// Spec: a routing change in the registry after submission does not affect
// the stored contract snapshot or executor inputs.
func TestAcceptance10_RoutingChangeDoesNotAffectExecutorInputs(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.gw.on("i-1", providerFailure, accepted)
	h.submit("i-1", smsDeadline, `{"to":"1"}`)
	in := h.waitAttempts("i-1", 1)

	moved := smsDeadline.Clone()
	moved.GatewayType, moved.GatewayURL = core.GatewayPush, "http://elsewhere.test"
	moved.TerminalOutcomes = []string{core.ReasonUnregisteredToken}
	h.useRegistry(moved, smsMaxAttempts, pushOneShot, pushBatch)

	h.waitTimer(in.NextDueAt)
	h.clock.AdvanceTo(in.NextDueAt)
	in = h.waitStatus("i-1", core.StatusAccepted)
	for i, c := range h.gw.callsFor("i-1") {
		want := ports.SubmitParams{GatewayType: core.GatewaySMS, GatewayURL: "http://sms-a.test", Reference: "i-1", Payload: []byte(`{"to":"1"}`)}
		if c.params.GatewayType != want.GatewayType || c.params.GatewayURL != want.GatewayURL ||
			c.params.Reference != want.Reference || string(c.params.Payload) != string(want.Payload) {
			t.Fatalf("call %d got %+v, want the snapshot's routing %+v", i+1, c.params, want)
		}
	}
	if in.Contract.GatewayURL != "http://sms-a.test" || in.Contract.GatewayType != core.GatewaySMS {
		t.Fatalf("stored snapshot changed: %+v", in.Contract)
	}
}

// Spec: an idempotency conflict error includes the conflicting
// target/payload and the existing intent status for diagnosis.
func TestAcceptance11_ConflictErrorIsDiagnosable(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.gw.on("i-1", rejected(core.ReasonInvalidMessage))
	h.submit("i-1", smsDeadline, `{"text": "a"}`)
	h.waitStatus("i-1", core.StatusRejected)

	_, err := h.service.SubmitIntent(h.ctx, ports.SubmitIntentParams{
		IntentID: "i-1", SubmissionTarget: pushBatch.SubmissionTarget, Payload: []byte(`{"text":"b"}`),
	})
	var c *core.IdempotencyConflictError
	if !errors.As(err, &c) {
		t.Fatalf("err = %v, want *core.IdempotencyConflictError", err)
	}
	want := core.IdempotencyConflictError{
		IntentID:          "i-1",
		ConflictingFields: []core.ConflictField{core.ConflictSubmissionTarget, core.ConflictPayload},
		ExistingTarget:    "sms.realtime", IncomingTarget: "push.batch",
		ExistingPayload: `{"text":"a"}`, IncomingPayload: `{"text":"b"}`,
		ExistingStatus: core.StatusRejected,
	}
	if mustJSON(t, *c) != mustJSON(t, want) {
		t.Fatalf("conflict\n got %+v\nwant %+v", *c, want)
	}
	for _, part := range []string{"i-1", "submissionTarget", "payload", "rejected"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("message %q does not mention %q", err.Error(), part)
		}
	}
}

// Spec: retry scheduling uses the fixed 5 second delay (and this delay is
// not surfaced as contract semantics).
func TestAcceptance12_RetryUsesFixedFiveSecondDelay(t *testing.T) {
	h := newHarness(t) // Config.Retry left nil: the default policy
	h.startLead()
	h.gw.on("i-1", providerFailure, accepted)
	h.submit("i-1", smsDeadline, `{}`)

	in := h.waitAttempts("i-1", 1)
	finished := in.Attempts[0].FinishedAt
	if want := finished.Add(5 * time.Second); !in.NextDueAt.Equal(want) {
		t.Fatalf("next due %v after the attempt finished, want exactly 5s", in.NextDueAt.Sub(finished))
	}
	h.waitTimer(in.NextDueAt)

	h.settle(5*time.Second - time.Nanosecond)
	if _, last := h.metrics.inFlightReports(); last != 0 || h.gw.callCount() != 1 {
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

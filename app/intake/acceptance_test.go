package intake_test

// The acceptance cases of the Phase 2 spec ("Validation and Acceptance")
// whose subject is the intake service: repeats, conflicts and registry
// edits. The executor's cases are in app/executor's acceptance_test.go;
// where the spec's case has an executor half (a repeat starts no attempt,
// the executor runs the snapshot), that half is asserted there.

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/intake"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// smsMaxAttempts is a third target, on another gateway and policy.
var smsMaxAttempts = core.Contract{
	SubmissionTarget: "sms.batch", GatewayType: core.GatewaySMS, GatewayURL: "http://sms-b.test",
	Mode: core.ModeBatch, Policy: core.PolicyMaxAttempts, MaxAttempts: 3,
	TerminalOutcomes: []string{core.ReasonInvalidRecipient},
}

// desk is one instance's intake over a store shared with the others, as
// the tests restart it with an edited registry.
type desk struct {
	t        *testing.T
	clock    *clocktest.Clock
	store    *memstore.Store
	notified *notifications
	metrics  *createdMetrics
	svc      *intake.Service
}

func newDesk(t *testing.T) *desk {
	d := &desk{t: t, clock: clocktest.New(t0), notified: &notifications{}, metrics: newCreatedMetrics()}
	d.store = memstore.New(d.clock)
	d.useRegistry(smsDeadline, smsMaxAttempts, pushBatch)
	return d
}

// useRegistry replaces the service with one over a registry of contracts,
// as a restart with an edited registry file would.
func (d *desk) useRegistry(contracts ...core.Contract) {
	d.t.Helper()
	reg, err := core.NewRegistry(contracts)
	if err != nil {
		d.t.Fatal(err)
	}
	d.svc, err = intake.NewService(intake.ServiceConfig{
		Registry: reg, Store: d.store, Clock: d.clock, Metrics: d.metrics, Notifier: d.notified,
	})
	if err != nil {
		d.t.Fatal(err)
	}
}

func (d *desk) submit(id string, c core.Contract, payload string) (ports.SubmitIntentResult, error) {
	return d.svc.SubmitIntent(d.t.Context(), ports.SubmitIntentParams{
		IntentID: id, SubmissionTarget: c.SubmissionTarget, Payload: []byte(payload),
	})
}

// answer records one attempt of id with outcome o and the policy's decision
// on it, as a leader's executor does.
func (d *desk) answer(id string, o core.Outcome) {
	d.t.Helper()
	ctx := d.t.Context()
	in, err := d.store.GetIntent(ctx, id)
	if err != nil {
		d.t.Fatal(err)
	}
	lease, ok, err := d.store.Acquire(ctx, ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "leader", Duration: time.Hour})
	if err != nil || !ok {
		d.t.Fatalf("acquire: ok=%v err=%v", ok, err)
	}
	now := d.clock.Now()
	if err := d.store.StartAttempt(ctx, ports.StartAttemptParams{Fence: lease.Fence(), IntentID: id, Number: 1, StartedAt: now}); err != nil {
		d.t.Fatal(err)
	}
	decision := core.Decide(in.Contract, in.DeadlineStart(), 1, now, core.AttemptResult{Outcome: &o}, core.DefaultRetryDelay)
	if err := d.store.FinishAttempt(ctx, ports.FinishAttemptParams{Fence: lease.Fence(), IntentID: id, Number: 1,
		FinishedAt: now, Outcome: &o, Sent: true, Decision: decision}); err != nil {
		d.t.Fatal(err)
	}
}

// Spec: same intentId + same payload returns the existing intent without
// duplication. The repeat is not handed to the executor, so it starts no
// attempt (app/executor checks that an ended intent gets no further call).
func TestAcceptance01_RepeatReturnsExistingIntentWithoutDuplication(t *testing.T) {
	d := newDesk(t)
	first, err := d.submit("i-1", smsDeadline, `{"to": "+15550100", "text": "hi"}`)
	if err != nil || !first.Created {
		t.Fatalf("the first submission did not create the intent: %v", err)
	}
	d.answer("i-1", core.Outcome{Status: core.OutcomeAccepted, MessageID: "m-1"})
	d.clock.Advance(time.Second)

	// Same payload, different formatting: the compacted bytes are equal.
	again, err := d.submit("i-1", smsDeadline, "{\"to\":\"+15550100\",\n \"text\":\"hi\"}")
	if err != nil || again.Created {
		t.Fatalf("repeat: created=%v err=%v, want the existing intent", again.Created, err)
	}
	if again.Intent.Status != core.StatusAccepted || !again.Intent.CreatedAt.Equal(t0) || again.Intent.AttemptCount != 1 {
		t.Fatalf("repeat returned %+v, want the existing accepted intent created at t0 with 1 attempt", again.Intent)
	}
	if !slices.Equal(d.notified.ids, []string{"i-1"}) {
		t.Fatalf("the executor was told of %v, want i-1 once: a repeat starts no attempt", d.notified.ids)
	}
	if n := d.metrics.created[smsDeadline.SubmissionTarget]; n != 1 {
		t.Fatalf("IntentCreated counted %d, want 1", n)
	}
}

// Spec: same intentId + different payload or target returns an idempotency
// conflict error.
func TestAcceptance02_DifferentPayloadOrTargetIsConflict(t *testing.T) {
	d := newDesk(t)
	if _, err := d.submit("i-1", smsDeadline, `{"text":"hi"}`); err != nil {
		t.Fatal(err)
	}
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
			_, err := d.submit("i-1", tc.target, tc.payload)
			var conflict *core.IdempotencyConflictError
			if !errors.As(err, &conflict) {
				t.Fatalf("err = %v, want *core.IdempotencyConflictError", err)
			}
			if !slices.Equal(conflict.ConflictingFields, tc.fields) {
				t.Fatalf("conflicting fields %v, want %v", conflict.ConflictingFields, tc.fields)
			}
		})
	}
	in, err := d.svc.GetIntent(t.Context(), "i-1")
	if err != nil || string(in.Payload) != `{"text":"hi"}` || in.SubmissionTarget != smsDeadline.SubmissionTarget {
		t.Fatalf("the existing intent changed: %+v, %v", in, err)
	}
}

// Spec: a contract snapshot remains unchanged even if the registry is
// modified after submission. The registry edit applies to new intents only;
// app/executor checks that the executor runs the stored snapshot.
func TestAcceptance09_SnapshotUnchangedAfterRegistryChange(t *testing.T) {
	d := newDesk(t)
	if _, err := d.submit("i-1", smsMaxAttempts, `{}`); err != nil {
		t.Fatal(err)
	}
	edited := smsMaxAttempts.Clone()
	edited.Policy, edited.MaxAttempts = core.PolicyOneShot, 0
	edited.TerminalOutcomes = []string{core.ReasonProviderFailure}
	d.useRegistry(smsDeadline, edited, pushBatch)

	in, err := d.svc.GetIntent(t.Context(), "i-1")
	if err != nil || mustJSON(t, in.Contract) != mustJSON(t, smsMaxAttempts) {
		t.Fatalf("stored snapshot %s (%v), want %s", mustJSON(t, in.Contract), err, mustJSON(t, smsMaxAttempts))
	}
	if c, _ := d.svc.Target(smsMaxAttempts.SubmissionTarget); c.Policy != core.PolicyOneShot {
		t.Fatalf("the registry edit did not take effect: %+v", c)
	}
	res, err := d.submit("i-2", smsMaxAttempts, `{}`)
	if err != nil || mustJSON(t, res.Intent.Contract) != mustJSON(t, edited) {
		t.Fatalf("a new intent's snapshot %s (%v), want the edited contract %s", mustJSON(t, res.Intent.Contract), err, mustJSON(t, edited))
	}
}

// Spec: an idempotency conflict error includes the conflicting
// target/payload and the existing intent status for diagnosis.
func TestAcceptance11_ConflictErrorIsDiagnosable(t *testing.T) {
	d := newDesk(t)
	if _, err := d.submit("i-1", smsDeadline, `{"text": "a"}`); err != nil {
		t.Fatal(err)
	}
	d.answer("i-1", core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonInvalidMessage})

	_, err := d.submit("i-1", pushBatch, `{"text":"b"}`)
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

// A client retrying a submission that was accepted before its target left
// the registry gets the existing intent, not an unknown-target error; a
// different payload under that id is still a conflict.
func TestRepeatAfterTheTargetLeftTheRegistryReturnsTheIntent(t *testing.T) {
	d := newDesk(t)
	if _, err := d.submit("i-1", smsMaxAttempts, `{}`); err != nil {
		t.Fatal(err)
	}
	d.useRegistry(smsDeadline) // operator removed sms.batch
	if _, err := d.submit("i-1", smsMaxAttempts, `{}`); err != nil {
		t.Fatalf("idempotent repeat refused: %v", err)
	}
	_, err := d.submit("i-1", smsMaxAttempts, `{"x":1}`)
	var conflict *core.IdempotencyConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("different payload after the target left: %v, want an idempotency conflict", err)
	}
	if _, err := d.submit("i-2", smsMaxAttempts, `{}`); !errors.Is(err, core.ErrUnknownTarget) {
		t.Fatalf("new intent for the removed target: %v, want ErrUnknownTarget", err)
	}
}

package intake_test

import (
	"errors"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// endRisky ends a pending intent through the store as a leader would, with
// a decision that says the gateway may already have its message: accepted
// after the deadline, or possibly accepted.
func endRisky(t *testing.T, store *memstore.Store, id string, late bool) {
	t.Helper()
	lease, ok, err := store.Acquire(t.Context(), ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "test", Duration: time.Hour})
	if err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	f := lease.Fence()
	if err := store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: f, IntentID: id, Number: 1, StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	p := ports.FinishAttemptParams{Fence: f, IntentID: id, Number: 1, FinishedAt: t0.Add(time.Minute), Sent: true}
	if late {
		o := core.Outcome{Status: core.OutcomeAccepted, MessageID: "gw-" + id}
		p.Outcome = &o
		p.Decision = core.Decision{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedDeadlineExceeded,
			AcceptedAfterDeadline: true, AcceptedMessageID: o.MessageID}
	} else {
		o := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonDuplicateReference}
		p.Outcome = &o
		p.Decision = core.Decision{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedMaxAttempts, PossiblyAccepted: true}
	}
	if err := store.FinishAttempt(t.Context(), p); err != nil {
		t.Fatal(err)
	}
}

// TestResubmittingADeliveredIntentNeedsTheRiskAcknowledged: an intent the
// gateway accepted after the deadline, or may have accepted, is refused
// with ErrDeliveryRisk (nothing created) unless the operator acknowledges
// the risk; once it has its resubmission, a repeat without the
// acknowledgement returns that one, as every repeat does.
func TestResubmittingADeliveredIntentNeedsTheRiskAcknowledged(t *testing.T) {
	for _, late := range []bool{true, false} {
		svc, store, n, _ := newService(t, 0)
		ctx := t.Context()
		if _, err := svc.SubmitIntent(ctx, ports.SubmitIntentParams{IntentID: "d-1", SubmissionTarget: "sms.realtime", Payload: []byte(`{"to":"1"}`)}); err != nil {
			t.Fatal(err)
		}
		endRisky(t, store, "d-1", late)
		_, err := svc.ResubmitIntent(ctx, ports.ResubmitIntentParams{IntentID: "d-1"})
		if !errors.Is(err, core.ErrDeliveryRisk) {
			t.Fatalf("late=%v: resubmitting without the acknowledgement: %v, want ErrDeliveryRisk", late, err)
		}
		if page, err := svc.ListIntents(ctx, ports.ListIntentsParams{Limit: 10}); err != nil || len(page.Intents) != 1 || len(n.ids) != 1 {
			t.Fatalf("late=%v: the refusal created something: %d intents, %d notified, %v", late, len(page.Intents), len(n.ids), err)
		}
		res, err := svc.ResubmitIntent(ctx, ports.ResubmitIntentParams{IntentID: "d-1", AcknowledgeDeliveryRisk: true})
		if err != nil || !res.Created || res.Intent.IntentID != "d-1~r1" {
			t.Fatalf("late=%v: acknowledged resubmission = %+v, %v", late, res, err)
		}
		again, err := svc.ResubmitIntent(ctx, ports.ResubmitIntentParams{IntentID: "d-1"})
		if err != nil || again.Created || again.Intent.IntentID != "d-1~r1" {
			t.Fatalf("late=%v: repeat without the acknowledgement = %+v, %v; want the existing resubmission", late, again, err)
		}
	}
}

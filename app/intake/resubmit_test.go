package intake_test

import (
	"errors"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// exhaustDirectly ends a pending intent through the store, as a leader would.
func exhaustDirectly(t *testing.T, store *memstore.Store, id string) {
	t.Helper()
	lease, ok, err := store.Acquire(t.Context(), ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "test", Duration: time.Hour})
	if err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	f := lease.Fence()
	if err := store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: f, IntentID: id, Number: 1, StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	err = store.FinishAttempt(t.Context(), ports.FinishAttemptParams{
		Fence: f, IntentID: id, Number: 1, FinishedAt: t0, Error: "timeout", Sent: true,
		Decision: core.Decision{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedMaxAttempts},
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestResubmitCreatesALinkedIntentOnce(t *testing.T) {
	svc, store, n, m := newService(t, 0)
	ctx := t.Context()
	if _, err := svc.SubmitIntent(ctx, ports.SubmitIntentParams{IntentID: "o-1", SubmissionTarget: "sms.realtime", Payload: []byte(`{"to":"1"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.ResubmitIntent(ctx, ports.ResubmitIntentParams{IntentID: "o-1"}); !errors.Is(err, core.ErrIntentNotEnded) {
		t.Fatalf("resubmitting a pending intent: %v, want ErrIntentNotEnded", err)
	}
	exhaustDirectly(t, store, "o-1")
	first, err := svc.ResubmitIntent(ctx, ports.ResubmitIntentParams{IntentID: "o-1"})
	if err != nil {
		t.Fatal(err)
	}
	if !first.Created || first.Intent.IntentID != "o-1~r1" || first.Intent.ResubmittedFrom != "o-1" ||
		first.Intent.Status != core.StatusPending || string(first.Intent.Payload) != `{"to":"1"}` {
		t.Fatalf("first resubmission = %+v", first)
	}
	again, err := svc.ResubmitIntent(ctx, ports.ResubmitIntentParams{IntentID: "o-1", NewIntentID: "other"})
	if err != nil || again.Created || again.Intent.IntentID != "o-1~r1" {
		t.Fatalf("repeat = %s created=%v err=%v, want o-1~r1 not created", again.Intent.IntentID, again.Created, err)
	}
	orig, err := svc.GetIntent(ctx, "o-1")
	if err != nil || orig.ResubmittedAs != "o-1~r1" {
		t.Fatalf("original links: %+v %v", orig.ResubmittedAs, err)
	}
	page, err := svc.ListIntents(ctx, ports.ListIntentsParams{Limit: 10})
	if err != nil || len(page.Intents) != 2 {
		t.Fatalf("list: %+v %v", page, err)
	}
	for _, in := range page.Intents {
		if in.ResubmittedAs == "" && in.ResubmittedFrom == "" {
			t.Errorf("listed %s without its link", in.IntentID)
		}
	}
	if got := n.ids; len(got) != 2 || got[1] != "o-1~r1" {
		t.Fatalf("notified %v, want the resubmission once", got)
	}
	if got := m.created["sms.realtime"]; got != 2 {
		t.Fatalf("IntentCreated counted %d, want 2", got)
	}
	if _, err := svc.ResubmitIntent(ctx, ports.ResubmitIntentParams{IntentID: "nope"}); !errors.Is(err, core.ErrIntentNotFound) {
		t.Fatalf("missing original: %v", err)
	}
	var fe *core.FieldError
	if _, err := svc.ResubmitIntent(ctx, ports.ResubmitIntentParams{IntentID: "o-1~r1", NewIntentID: "a\nb"}); !errors.As(err, &fe) {
		// o-1~r1 is pending, so the refusal may also be ErrIntentNotEnded.
		if !errors.Is(err, core.ErrIntentNotEnded) {
			t.Fatalf("bad new id: %v", err)
		}
	}
}

package intake_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

func TestSubmitJudgesPayloadsInCanonicalFormAndNotBefore(t *testing.T) {
	svc, _, _, _ := newService(t, 0)
	submit := func(payload string, notBefore time.Time) (ports.SubmitIntentResult, error) {
		return svc.SubmitIntent(t.Context(), ports.SubmitIntentParams{
			IntentID: "i-1", SubmissionTarget: smsDeadline.SubmissionTarget, Payload: []byte(payload), NotBefore: notBefore,
		})
	}
	at := t0.Add(time.Hour)
	if _, err := submit(`{"b":"<","a":1}`, at); err != nil {
		t.Fatal(err)
	}
	// Another key order and escaping, the same instant in another zone and
	// with nanoseconds the store does not keep: a repeat.
	again, err := submit(`{"a":1,"b":"\u003c"}`, at.In(time.FixedZone("+01", 3600)).Add(300*time.Nanosecond))
	if err != nil || again.Created {
		t.Fatalf("repeat: created=%v err=%v", again.Created, err)
	}
	if string(again.Intent.Payload) != `{"b":"<","a":1}` {
		t.Errorf("stored payload %s, want the first submission's bytes", again.Intent.Payload)
	}
	for _, tc := range []struct {
		payload   string
		notBefore time.Time
		fields    []core.ConflictField
	}{
		{`{"a":1,"b":"<"}`, time.Time{}, []core.ConflictField{core.ConflictNotBefore}},
		{`{"a":1,"b":"<"}`, at.Add(time.Second), []core.ConflictField{core.ConflictNotBefore}},
		{`{"a":1.0,"b":"<"}`, at, []core.ConflictField{core.ConflictPayload}},
	} {
		_, err := submit(tc.payload, tc.notBefore)
		var conflict *core.IdempotencyConflictError
		if !errors.As(err, &conflict) || !slices.Equal(conflict.ConflictingFields, tc.fields) {
			t.Errorf("%s at %v: err = %v, want a conflict naming %v", tc.payload, tc.notBefore, err, tc.fields)
		}
	}
}

func TestSubmitRefusesRepeatedMembersAndFarNotBefore(t *testing.T) {
	svc, store, _, _ := newService(t, 0)
	for _, tc := range []struct {
		payload   string
		notBefore time.Time
		field     string
	}{
		{`{"to":1,"x":{"y":1,"y":2}}`, time.Time{}, "payload.x.y"},
		{`{"to":1}`, t0.Add(core.DefaultMaxNotBefore + time.Second), "notBefore"},
	} {
		_, err := svc.SubmitIntent(t.Context(), ports.SubmitIntentParams{
			IntentID: "i-1", SubmissionTarget: smsDeadline.SubmissionTarget, Payload: []byte(tc.payload), NotBefore: tc.notBefore,
		})
		var fe *core.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: err = %v, want a field error naming %s", tc.payload, err, tc.field)
		}
	}
	if _, err := store.GetIntent(t.Context(), "i-1"); !errors.Is(err, core.ErrIntentNotFound) {
		t.Errorf("a refused submission was stored: %v", err)
	}
}

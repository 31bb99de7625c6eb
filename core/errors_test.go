package core

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func existingIntent(status IntentStatus) Intent {
	i := NewIntent("order-42", deadlineContract, []byte(`{"to":"+15550100","body":"hi"}`), policyCreatedAt)
	i.Status = status
	return i
}

func TestCheckIdempotencyAcceptsAnExactRepeat(t *testing.T) {
	for _, status := range []IntentStatus{StatusPending, StatusAccepted, StatusRejected, StatusExhausted} {
		if err := CheckIdempotency(existingIntent(status), Submission{SubmissionTarget: "sms.realtime", Payload: []byte(`{"to":"+15550100","body":"hi"}`)}); err != nil {
			t.Errorf("repeat of a %s intent: %v, want nil", status, err)
		}
	}
}

func TestCheckIdempotencyNamesTheConflict(t *testing.T) {
	const samePayload = `{"to":"+15550100","body":"hi"}`
	tests := []struct {
		name    string
		status  IntentStatus
		target  string
		payload string
		want    IdempotencyConflictError
		message string
	}{
		{
			"target differs", StatusPending, "push.realtime", samePayload,
			IdempotencyConflictError{
				IntentID: "order-42", ConflictingFields: []ConflictField{ConflictSubmissionTarget},
				ExistingTarget: "sms.realtime", IncomingTarget: "push.realtime",
				ExistingPayload: samePayload, IncomingPayload: samePayload, ExistingStatus: StatusPending,
			},
			`idempotency conflict for intent "order-42": submissionTarget differ from the existing pending intent`,
		},
		{
			"payload differs", StatusAccepted, "sms.realtime", `{"to":"+15550100","body":"bye"}`,
			IdempotencyConflictError{
				IntentID: "order-42", ConflictingFields: []ConflictField{ConflictPayload},
				ExistingTarget: "sms.realtime", IncomingTarget: "sms.realtime",
				ExistingPayload: samePayload, IncomingPayload: `{"to":"+15550100","body":"bye"}`, ExistingStatus: StatusAccepted,
			},
			`idempotency conflict for intent "order-42": payload differ from the existing accepted intent`,
		},
		{
			"a number spelled differently is a different payload", StatusRejected, "sms.realtime", `{"to":"+15550100","body":"hi","n":1.0}`,
			IdempotencyConflictError{
				IntentID: "order-42", ConflictingFields: []ConflictField{ConflictPayload},
				ExistingTarget: "sms.realtime", IncomingTarget: "sms.realtime",
				ExistingPayload: samePayload, IncomingPayload: `{"to":"+15550100","body":"hi","n":1.0}`, ExistingStatus: StatusRejected,
			},
			`payload differ from the existing rejected intent`,
		},
		{
			"both differ", StatusExhausted, "sms.batch", `{}`,
			IdempotencyConflictError{
				IntentID: "order-42", ConflictingFields: []ConflictField{ConflictSubmissionTarget, ConflictPayload},
				ExistingTarget: "sms.realtime", IncomingTarget: "sms.batch",
				ExistingPayload: samePayload, IncomingPayload: `{}`, ExistingStatus: StatusExhausted,
			},
			`submissionTarget and payload differ from the existing exhausted intent`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckIdempotency(existingIntent(tt.status), Submission{SubmissionTarget: tt.target, Payload: []byte(tt.payload)})
			var conflict *IdempotencyConflictError
			if !errors.As(fmt.Errorf("submit: %w", err), &conflict) {
				t.Fatalf("CheckIdempotency = %v (%T), want *IdempotencyConflictError", err, err)
			}
			if !reflect.DeepEqual(*conflict, tt.want) {
				t.Errorf("conflict =\n%+v\nwant\n%+v", *conflict, tt.want)
			}
			if !strings.Contains(err.Error(), tt.message) {
				t.Errorf("Error() = %q, want it to contain %q", err, tt.message)
			}
		})
	}
}

func TestCheckIdempotencyComparesCanonicalForms(t *testing.T) {
	existing := existingIntent(StatusPending) // {"to":"+15550100","body":"hi"}
	for _, same := range []string{
		`{"body":"hi","to":"+15550100"}`,
		"{ \"to\" : \"+15550100\",\n \"body\" : \"hi\" }",
		`{"\u0074o":"\u002b15550100","body":"h\u0069"}`,
	} {
		if err := CheckIdempotency(existing, Submission{SubmissionTarget: "sms.realtime", Payload: []byte(same)}); err != nil {
			t.Errorf("%s conflicts with the same data in another spelling: %v", same, err)
		}
	}
}

func TestCheckIdempotencyComparesStoredPayloadsWithRepeatedMembersByBytes(t *testing.T) {
	// Stored before repeated member names were refused: it has no canonical
	// form, so only the identical bytes repeat it.
	existing := existingIntent(StatusPending)
	existing.Payload = []byte(`{"a":1,"a":2}`)
	if err := CheckIdempotency(existing, Submission{SubmissionTarget: "sms.realtime", Payload: []byte(`{"a":1,"a":2}`)}); err != nil {
		t.Errorf("identical bytes conflict: %v", err)
	}
	if err := CheckIdempotency(existing, Submission{SubmissionTarget: "sms.realtime", Payload: []byte(`{"a":2}`)}); err == nil {
		t.Error("a different payload repeated an intent with repeated member names")
	}
}

func TestCheckIdempotencyNamesADifferentNotBefore(t *testing.T) {
	at := policyCreatedAt.Add(time.Hour)
	existing := existingIntent(StatusPending).WithNotBefore(at)
	payload := []byte(`{"to":"+15550100","body":"hi"}`)
	if err := CheckIdempotency(existing, Submission{SubmissionTarget: "sms.realtime", Payload: payload, NotBefore: at.In(time.FixedZone("x", 3600))}); err != nil {
		t.Errorf("the same instant in another zone conflicts: %v", err)
	}
	for _, nb := range []time.Time{{}, at.Add(time.Microsecond)} {
		err := CheckIdempotency(existing, Submission{SubmissionTarget: "sms.realtime", Payload: payload, NotBefore: nb})
		var conflict *IdempotencyConflictError
		if !errors.As(err, &conflict) || !reflect.DeepEqual(conflict.ConflictingFields, []ConflictField{ConflictNotBefore}) {
			t.Errorf("notBefore %v: err = %v, want a conflict naming only notBefore", nb, err)
		}
	}
}

func TestSentinelErrorsAreDistinctAndSurviveWrapping(t *testing.T) {
	sentinels := []error{ErrIntentNotFound, ErrUnknownTarget, ErrFenced, ErrStoreUnavailable, ErrIntentNotRunnable, ErrPayloadTooLarge}
	for i, a := range sentinels {
		wrapped := fmt.Errorf("adapter: %w", a)
		for j, b := range sentinels {
			if errors.Is(wrapped, b) != (i == j) {
				t.Errorf("errors.Is(wrap(%v), %v) = %v", a, b, i != j)
			}
		}
	}
}

package core

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func existingIntent(status IntentStatus) Intent {
	i := NewIntent("order-42", deadlineContract, []byte(`{"to":"+15550100","body":"hi"}`), policyCreatedAt)
	i.Status = status
	return i
}

func TestCheckIdempotencyAcceptsAnExactRepeat(t *testing.T) {
	for _, status := range []IntentStatus{StatusPending, StatusAccepted, StatusRejected, StatusExhausted} {
		if err := CheckIdempotency(existingIntent(status), "sms.realtime", []byte(`{"to":"+15550100","body":"hi"}`)); err != nil {
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
			"member order is a different payload", StatusRejected, "sms.realtime", `{"body":"hi","to":"+15550100"}`,
			IdempotencyConflictError{
				IntentID: "order-42", ConflictingFields: []ConflictField{ConflictPayload},
				ExistingTarget: "sms.realtime", IncomingTarget: "sms.realtime",
				ExistingPayload: samePayload, IncomingPayload: `{"body":"hi","to":"+15550100"}`, ExistingStatus: StatusRejected,
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
			err := CheckIdempotency(existingIntent(tt.status), tt.target, []byte(tt.payload))
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

func TestCheckIdempotencyComparesBytesNotFormatting(t *testing.T) {
	// CheckIdempotency compares stored bytes; callers compact the incoming
	// payload first, which is what makes formatting irrelevant.
	existing := existingIntent(StatusPending)
	incoming, err := CompactPayload([]byte("{ \"to\" : \"+15550100\",\n \"body\" : \"hi\" }"))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckIdempotency(existing, "sms.realtime", incoming); err != nil {
		t.Errorf("compacted reformatting of the same payload conflicts: %v", err)
	}
	if err := CheckIdempotency(existing, "sms.realtime", []byte("{ \"to\" : \"+15550100\",\n \"body\" : \"hi\" }")); err == nil {
		t.Error("uncompacted bytes compared equal: the check is not byte-exact")
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

package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors shared by the core, the ports and every adapter. Adapters
// map their driver errors onto these in one place each, so callers (the HTTP
// error mapper, the engine) never look at driver-specific errors.
var (
	// ErrIntentNotFound means no intent has the requested intentId.
	ErrIntentNotFound = errors.New("intent not found")
	// ErrUnknownTarget means the submissionTarget is not in the registry.
	ErrUnknownTarget = errors.New("unknown submission target")
	// ErrFenced means an execution-state write affected no row because the
	// writer no longer holds the lease at the epoch it named. The engine
	// treats it as lost leadership.
	ErrFenced = errors.New("fenced: lease not held at this epoch")
	// ErrStoreUnavailable means the store could not be reached or failed in a
	// way that says nothing about the request itself.
	ErrStoreUnavailable = errors.New("store unavailable")
	// ErrIntentNotRunnable means an attempt was asked for an intent that is
	// terminal or whose attempt count moved on: somebody else already ran it.
	ErrIntentNotRunnable = errors.New("intent not runnable")
	// ErrPayloadTooLarge means a submission's compacted payload is over the
	// operator's size limit; it is refused before anything is stored, so an
	// API can answer 413 and the client can shrink it and retry.
	ErrPayloadTooLarge = errors.New("payload too large")
)

// ConflictField names a field whose value differs from the existing intent's.
type ConflictField string

// The fields an idempotency conflict can name.
const (
	ConflictSubmissionTarget ConflictField = "submissionTarget"
	ConflictPayload          ConflictField = "payload"
	ConflictNotBefore        ConflictField = "notBefore"
)

// IdempotencyConflictError says that an intentId is already taken by an intent
// with a different submissionTarget or payload. It carries both values and the
// existing intent's status so that a caller can tell a retry bug from a
// genuine key collision without another lookup.
type IdempotencyConflictError struct {
	IntentID          string
	ConflictingFields []ConflictField
	ExistingTarget    string
	IncomingTarget    string
	ExistingPayload   string
	IncomingPayload   string
	ExistingStatus    IntentStatus
}

func (e *IdempotencyConflictError) Error() string {
	fields := make([]string, len(e.ConflictingFields))
	for i, f := range e.ConflictingFields {
		fields[i] = string(f)
	}
	return fmt.Sprintf("idempotency conflict for intent %q: %s differ from the existing %s intent",
		e.IntentID, strings.Join(fields, " and "), e.ExistingStatus)
}

// Submission is what an idempotent repeat of an intent must match.
type Submission struct {
	SubmissionTarget string
	// Payload is the compacted payload; it is compared in canonical form.
	Payload json.RawMessage
	// NotBefore is the requested first send time; zero means none.
	NotBefore time.Time
}

// CheckIdempotency compares an incoming submission with the existing intent
// of the same intentId. It returns nil when the submission repeats the intent
// (same target, same payload in canonical form, same notBefore) and the
// conflict otherwise. Payloads are compared by CanonicalPayload, computed
// from the stored bytes each time, so intents stored before the canonical
// comparison existed are judged the same way; a stored payload that has no
// canonical form (it repeats a member name, which was accepted before such
// payloads were refused) is compared byte for byte.
func CheckIdempotency(existing Intent, incoming Submission) error {
	var fields []ConflictField
	if existing.SubmissionTarget != incoming.SubmissionTarget {
		fields = append(fields, ConflictSubmissionTarget)
	}
	if !samePayload(existing.Payload, incoming.Payload) {
		fields = append(fields, ConflictPayload)
	}
	if !existing.NotBefore.Equal(incoming.NotBefore) {
		fields = append(fields, ConflictNotBefore)
	}
	if len(fields) == 0 {
		return nil
	}
	return &IdempotencyConflictError{
		IntentID:          existing.IntentID,
		ConflictingFields: fields,
		ExistingTarget:    existing.SubmissionTarget,
		IncomingTarget:    incoming.SubmissionTarget,
		ExistingPayload:   string(existing.Payload),
		IncomingPayload:   string(incoming.Payload),
		ExistingStatus:    existing.Status,
	}
}

// samePayload reports whether two compacted payloads are the same data in
// canonical form (byte-equal payloads always are).
func samePayload(existing, incoming []byte) bool {
	if string(existing) == string(incoming) {
		return true
	}
	a, errA := CanonicalPayload(existing)
	b, errB := CanonicalPayload(incoming)
	if errA != nil || errB != nil {
		return false
	}
	return string(a) == string(b)
}

// FieldError names one invalid field of a request, by its JSON path, so that
// an API can say exactly which field to fix.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

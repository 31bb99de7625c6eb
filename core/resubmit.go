package core

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// ErrIntentNotEnded means a resubmission was asked for an intent that is
// still pending: only an ended (terminal) intent can be resubmitted, since a
// pending one is still being driven by its own attempts.
var ErrIntentNotEnded = errors.New("intent has not ended")

// ErrResubmissionIDTaken means the intentId chosen for a resubmission already
// names another intent that is not this intent's resubmission.
var ErrResubmissionIDTaken = errors.New("resubmission intentId is taken")

// resubmissionMark separates an intentId from its resubmission number.
const resubmissionMark = "~r"

// DeriveResubmissionID returns the intentId a resubmission of intentID gets
// when the operator names none: "{id}~r1" for an original, and the next
// number for a resubmission ("a~r1" gives "a~r2"), so a chain of
// resubmissions of one original reads as one family instead of growing
// "~r1~r1~r1".
func DeriveResubmissionID(intentID string) string {
	if i := strings.LastIndex(intentID, resubmissionMark); i > 0 {
		digits := intentID[i+len(resubmissionMark):]
		if n, err := strconv.Atoi(digits); err == nil && n >= 1 && strconv.Itoa(n) == digits {
			return intentID[:i] + resubmissionMark + strconv.Itoa(n+1)
		}
	}
	return intentID + resubmissionMark + "1"
}

// NewResubmission builds the pending intent that resubmits an ended intent:
// a new intentId, the same target and payload, and the contract the registry
// holds now (not the original's snapshot: the operator resubmits because
// something changed, and the new intent is judged by today's rules).
func NewResubmission(original Intent, newID string, current Contract, now time.Time) Intent {
	in := NewIntent(newID, current, original.Payload, now)
	in.ResubmittedFrom = original.IntentID
	// The same message sent again belongs to the trace it was first
	// submitted in.
	in.TraceParent = original.TraceParent
	return in
}

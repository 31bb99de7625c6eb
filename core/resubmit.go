package core

import (
	"errors"
	"fmt"
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

// ErrDeliveryRisk means a resubmission was asked, without the operator
// acknowledging the risk, for an ended intent whose message the gateway may
// already have (see DeliveryRisk): the resubmission could deliver the same
// message twice.
var ErrDeliveryRisk = errors.New("the gateway may already have delivered this intent's message")

// DeliveryRisk reports, with ErrDeliveryRisk wrapped in a sentence saying
// why, whether the gateway may already have the message of an ended
// intent: it accepted an attempt at or after the acceptance deadline
// (AcceptedAfterDeadline), or may have accepted one whose answer was lost
// (PossiblyAccepted). The statuses do not say it (both may be exhausted);
// these facts do. Such an intent is never resubmitted in bulk, and on its
// own only when the operator acknowledges the risk. It is nil otherwise.
func DeliveryRisk(in Intent) error {
	switch {
	case in.AcceptedAfterDeadline && in.AcceptedMessageID != "":
		return fmt.Errorf("%w: the gateway accepted intent %q after its acceptance deadline (message %s)",
			ErrDeliveryRisk, in.IntentID, in.AcceptedMessageID)
	case in.AcceptedAfterDeadline:
		return fmt.Errorf("%w: the gateway accepted intent %q after its acceptance deadline", ErrDeliveryRisk, in.IntentID)
	case in.PossiblyAccepted:
		return fmt.Errorf("%w: the gateway may have accepted an attempt of intent %q whose answer was lost",
			ErrDeliveryRisk, in.IntentID)
	}
	return nil
}

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

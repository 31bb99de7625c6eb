package core

import (
	"errors"
	"fmt"
)

// The ways a gateway answer can fail to be an outcome. NewOutcome returns
// them (wrapped with the detail), so an adapter can classify the failure
// with errors.Is without restating the rule.
var (
	// ErrOutcomeNoStatus means the answer carries no status.
	ErrOutcomeNoStatus = errors.New("gateway answer has no status")
	// ErrOutcomeUnknownStatus means the status is neither accepted nor
	// rejected (statuses are case-sensitive).
	ErrOutcomeUnknownStatus = errors.New("gateway answer has unknown status")
	// ErrOutcomeNoReason means the answer is a rejection without a reason.
	ErrOutcomeNoReason = errors.New("gateway answer rejected without a reason")
)

// NewOutcome reads what a gateway said into an Outcome. It is the one home
// of the rule for a well-formed answer, applied once where the answer enters
// the core (the gateway adapter calls it); the engine, the policy and the
// stores trust an Outcome as it comes.
//
// A well-formed answer is accepted, or rejected with a reason. A reason on an
// acceptance means nothing and is dropped. A rejection reason outside the
// taxonomy is valid and kept as said: it can never be terminal, because
// terminalOutcomes must come from the taxonomy. Anything else is an error
// wrapping ErrOutcomeNoStatus, ErrOutcomeUnknownStatus or ErrOutcomeNoReason,
// which the engine records as the attempt's error, never as an outcome.
func NewOutcome(status OutcomeStatus, reason, messageID string) (Outcome, error) {
	switch status {
	case OutcomeAccepted:
		return Outcome{Status: status, MessageID: messageID}, nil
	case OutcomeRejected:
		if reason == "" {
			return Outcome{}, ErrOutcomeNoReason
		}
		return Outcome{Status: status, Reason: reason, MessageID: messageID}, nil
	case "":
		return Outcome{}, ErrOutcomeNoStatus
	default:
		return Outcome{}, fmt.Errorf("%w %q", ErrOutcomeUnknownStatus, status)
	}
}

// StoredOutcome rebuilds an outcome from the three columns a store keeps it
// in; an empty status is no outcome. It does not validate: the outcome was
// built by NewOutcome before it was written, and the schema holds it so.
func StoredOutcome(status, reason, messageID string) *Outcome {
	if status == "" {
		return nil
	}
	return &Outcome{Status: OutcomeStatus(status), Reason: reason, MessageID: messageID}
}

package ports

import (
	"errors"
	"fmt"

	"github.com/submissionmanager/submission-manager/core"
)

// ErrInvalidWrite means a store refused an execution write whose parameters
// break the rules below. The store refuses before it writes or reads
// anything, whatever the fence or the intent, so a defect in the executor
// shows as this error instead of as a contradictory intent or a schema
// constraint failing mid-transaction. It never says anything about the
// store: it is not core.ErrStoreUnavailable.
var ErrInvalidWrite = errors.New("invalid execution write")

// Validate is the rule every store applies to a StartAttempt before it
// writes: the attempt has a start time. (Number is not judged here: a
// number that is not the intent's next is the intent having moved on,
// core.ErrIntentNotRunnable, which only the stored intent can tell.)
func (p StartAttemptParams) Validate() error {
	if p.StartedAt.IsZero() {
		return invalidWrite("start attempt", p.IntentID, p.Number, errors.New("StartedAt is required"))
	}
	return nil
}

// Validate is the rule every store applies to a FinishAttempt before it
// writes: the attempt closes at a finish time, with exactly one of the
// gateway's outcome and an error text, with an outcome only when it was
// sent, and the decision is well formed (core.Decision.Validate). A
// decision that says the gateway accepted after the deadline closes an
// attempt the gateway accepted, and names that acceptance's message id.
func (p FinishAttemptParams) Validate() error {
	var problem error
	d := p.Decision
	switch {
	case p.FinishedAt.IsZero():
		problem = errors.New("FinishedAt is required")
	case (p.Outcome == nil) == (p.Error == ""):
		problem = errors.New("exactly one of Outcome and Error must be set")
	case p.Outcome != nil && !p.Sent:
		problem = errors.New("an attempt that was not sent has no outcome")
	case d.AcceptedAfterDeadline && (p.Outcome == nil || p.Outcome.Status != core.OutcomeAccepted):
		problem = errors.New("an acceptance after the deadline closes an accepted attempt")
	case d.AcceptedAfterDeadline && d.AcceptedMessageID != p.Outcome.MessageID:
		problem = fmt.Errorf("the acceptance after the deadline names message %q, the attempt's outcome %q",
			d.AcceptedMessageID, p.Outcome.MessageID)
	default:
		problem = p.Decision.Validate()
	}
	if problem != nil {
		return invalidWrite("finish attempt", p.IntentID, p.Number, problem)
	}
	return nil
}

// Validate is the rule every store applies to a Reschedule before it
// writes: the decision is one a deferral can make
// (core.Decision.ValidateDeferral).
func (p RescheduleParams) Validate() error {
	if err := p.Decision.ValidateDeferral(); err != nil {
		return fmt.Errorf("%w: reschedule %q at attempt count %d: %w", ErrInvalidWrite, p.IntentID, p.AttemptCount, err)
	}
	return nil
}

func invalidWrite(what, intentID string, number int, problem error) error {
	return fmt.Errorf("%w: %s %d of %q: %w", ErrInvalidWrite, what, number, intentID, problem)
}

// ValidateStarts is the rule every store applies to a StartAttempts batch
// before it writes: each item's own (StartAttemptParams.Validate), and no
// two items of one intent, since a batch is the reservations of one moment
// and one intent has at most one attempt under way. It returns one answer
// per item; the items answered nil go on to be written.
func ValidateStarts(attempts []StartAttemptParams) []error {
	return validateBatch(attempts, func(p StartAttemptParams) (string, error) { return p.IntentID, p.Validate() })
}

// ValidateFinishes is ValidateStarts for a FinishAttempts batch.
func ValidateFinishes(attempts []FinishAttemptParams) []error {
	return validateBatch(attempts, func(p FinishAttemptParams) (string, error) { return p.IntentID, p.Validate() })
}

func validateBatch[P any](items []P, check func(P) (string, error)) []error {
	errs := make([]error, len(items))
	seen := make(map[string]bool, len(items))
	for i, p := range items {
		id, err := check(p)
		switch {
		case err != nil:
			errs[i] = err
		case seen[id]:
			errs[i] = fmt.Errorf("%w: intent %q is named twice in one batch", ErrInvalidWrite, id)
		}
		seen[id] = true
	}
	return errs
}

package ports

import (
	"context"

	"github.com/submissionmanager/submission-manager/core"
)

// RescheduleParams moves a pending intent's next due time without an
// attempt: the executor deferred its attempt (the gateway's circuit breaker
// is open, or the gateway is paused), so no attempt row is written and no
// try is spent. Decision is either pending with NextDueAt, or exhausted with
// deadline_exceeded when the deferral would not end strictly before the
// intent's deadline (core.DecideDeferral makes it, Validate holds every
// store to it): the contract's policy still decides every status.
type RescheduleParams struct {
	Fence    core.Fence
	IntentID string
	// AttemptCount must equal the intent's attempt count (and its latest
	// attempt, if any, must be finished); otherwise the intent moved on and
	// the store returns core.ErrIntentNotRunnable.
	AttemptCount int
	Decision     core.Decision
}

// Rescheduler is the fenced write behind a deferral: a due attempt that is
// not made (its gateway's breaker is open, or it is paused) moves the
// intent's due time, or ends it by the deadline rule, without an attempt
// row, so no try is spent and the next leader sees the deferral. Every
// Store is one.
type Rescheduler interface {
	// Reschedule applies p.Decision to a pending intent in one fenced
	// write that also advances its change marker. It returns
	// core.ErrFenced, core.ErrIntentNotFound, or core.ErrIntentNotRunnable
	// (terminal, attempt count moved, or an attempt open); a decision that
	// p.Validate refuses is refused with ErrInvalidWrite before anything is
	// written.
	Reschedule(ctx context.Context, p RescheduleParams) error
}

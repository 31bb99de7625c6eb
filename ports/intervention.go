package ports

import (
	"context"
	"errors"
	"fmt"

	"github.com/submissionmanager/submission-manager/core"
)

// IntentActionParams names the pending intent an operator acts on, and who
// acts (the event's actor).
type IntentActionParams struct {
	IntentID string
	Actor    core.Actor
}

// Validate is the rule every store applies to an operator action before it
// writes: an intentId, and an actor that says through which surface it came
// and with which role, and on the console which session (core.SessionTag),
// and nothing else.
func (p IntentActionParams) Validate() error {
	var problem error
	a := p.Actor
	switch {
	case p.IntentID == "":
		problem = errors.New("an intentId is required")
	case a.Surface != SurfaceAPI && a.Surface != SurfaceConsole:
		problem = fmt.Errorf("the actor acts through %q or %q, not %q", SurfaceAPI, SurfaceConsole, a.Surface)
	case !knownRole(a.Role):
		problem = fmt.Errorf("the actor's role %d is not a role", a.Role)
	case a.Surface == SurfaceAPI && a.Session != "":
		problem = errors.New("an API actor has no console session")
	case a.Session != "" && !isSessionTag(a.Session):
		problem = fmt.Errorf("a console session tag is %d lower-case hex digits, not %q", core.SessionTagLength, a.Session)
	}
	if problem != nil {
		return fmt.Errorf("%w: operator action on %q: %w", ErrInvalidWrite, p.IntentID, problem)
	}
	return nil
}

func knownRole(r core.Role) bool {
	named, ok := core.RoleNamed(r.String())
	return ok && named == r
}

func isSessionTag(s string) bool {
	if len(s) != core.SessionTagLength {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// InterventionStore is the store's side of an operator's actions on a
// pending intent: cancel it, or make its next try due now, each recorded as
// an event of the intent in the same write. Neither is fenced: an operator
// needs no lease. A cancel instead excludes the executor by the intent's
// own state: it applies only while no attempt is open, in one conditional
// write, so that of a cancel and a StartAttempts reservation of the same
// intent exactly one wins, on every store and across instances; and since a
// cancel never meets an open attempt, no FinishAttempts can follow it. Both
// advance the intent's change marker, so every leader's refresh sees them.
type InterventionStore interface {
	// CancelIntent ends a pending intent with no attempt open as exhausted
	// with core.ExhaustedCancelled (no next due time), and records an
	// ActionCancel event, in one write. It reports whether it wrote: an
	// intent already cancelled is answered applied=false with no error and
	// nothing written (cancelling is idempotent). Errors:
	// core.ErrIntentNotFound, core.ErrAttemptInFlight (pending, its latest
	// attempt open), core.ErrIntentEnded (ended otherwise), ErrInvalidWrite
	// (p.Validate refused it; nothing is read or written).
	CancelIntent(ctx context.Context, p IntentActionParams) (applied bool, err error)
	// RunIntentNow makes a pending intent due now in the store's time,
	// when it is due later, and records an ActionRunNow event, in one
	// write. An intent already due (its next due time not after the
	// store's now) is answered applied=false with nothing written. Errors:
	// core.ErrIntentNotFound, core.ErrIntentEnded, ErrInvalidWrite.
	RunIntentNow(ctx context.Context, p IntentActionParams) (applied bool, err error)
	// IntentEvents returns the intent's events, oldest first (by Number);
	// none for an intent without events or without a row.
	IntentEvents(ctx context.Context, intentID string) ([]core.IntentEvent, error)
}

// CancelVerdict is the one reading of a cancel that changed nothing, from
// the intent as the store found it: already cancelled is nil (the repeat
// is answered as a success), ended otherwise is core.ErrIntentEnded, and
// pending is core.ErrAttemptInFlight: its latest attempt was open when the
// cancel looked (a store that reads again after its write may find it
// finished meanwhile, the attempt having been in flight at the cancel).
func CancelVerdict(intentID string, status core.IntentStatus, reason core.ExhaustedReason) error {
	switch {
	case status == core.StatusExhausted && reason == core.ExhaustedCancelled:
		return nil
	case status.Terminal():
		return fmt.Errorf("%w: %q is %s", core.ErrIntentEnded, intentID, status)
	default:
		return fmt.Errorf("%w: %q", core.ErrAttemptInFlight, intentID)
	}
}

// RunNowVerdict is the one reading of a run now that changed nothing: an
// ended intent is core.ErrIntentEnded; a pending one was due already, which
// is success.
func RunNowVerdict(intentID string, status core.IntentStatus) error {
	if status.Terminal() {
		return fmt.Errorf("%w: %q is %s", core.ErrIntentEnded, intentID, status)
	}
	return nil
}

package core

import (
	"encoding/hex"
	"errors"
	"time"
)

// An operator may act on a pending intent in two ways: cancel it, or make
// its next try due now. Both are recorded as events of the intent, so its
// history says who did what and when.

// ExhaustedCancelled means an operator cancelled the intent while it was
// pending and no attempt was in flight. It is not a policy rule:
// ExhaustedReason.Valid, which every decision of the policy is held to,
// does not list it, and only a store's cancel write sets it.
const ExhaustedCancelled ExhaustedReason = "cancelled"

// ErrIntentEnded means an operator action that needs a pending intent met
// an ended one (cancelling an intent that ended otherwise than by a cancel,
// or making an ended intent due now).
var ErrIntentEnded = errors.New("intent has ended")

// ErrAttemptInFlight means a cancel met an intent whose latest attempt is
// open: its gateway call may be under way, and its result must be recorded
// before anything else is decided. The operator retries once it finished.
var ErrAttemptInFlight = errors.New("an attempt of the intent is in flight")

// IntentAction is what an operator did to an intent.
type IntentAction string

// The actions an event records.
const (
	// ActionCancel ended the pending intent as exhausted, cancelled.
	ActionCancel IntentAction = "cancel"
	// ActionRunNow made the pending intent's next try due at once.
	ActionRunNow IntentAction = "run_now"
)

// Valid reports whether a is one of the actions.
func (a IntentAction) Valid() bool { return a == ActionCancel || a == ActionRunNow }

// SessionTagLength is the length of a console session's tag (Actor.Session).
const SessionTagLength = 12

// Actor is who acted: the surface (ports.SurfaceAPI or
// ports.SurfaceConsole), the role of the key it presented (RoleNone when
// the service has no keys), and for the console the tag of the session. It
// never holds a key nor anything a key or a session cookie could be rebuilt
// from.
type Actor struct {
	Surface string
	Role    Role
	// Session is SessionTag of the console session that acted; empty for
	// the API.
	Session string
}

// RoleNamed is the role String names name; ok is false for any other text.
func RoleNamed(name string) (r Role, ok bool) {
	for _, r := range []Role{RoleNone, RoleClient, RoleOperator} {
		if r.String() == name {
			return r, true
		}
	}
	return RoleNone, false
}

// SessionTag names a console session in an intent's history: the start of
// the store's name of the session (itself a digest of the cookie's token),
// enough to tell one operator's session from another's and to find it among
// the stored sessions, too little to sign in with.
func SessionTag(id SessionID) string { return hex.EncodeToString(id[:SessionTagLength/2]) }

// IntentEvent is one operator action on an intent, as its history records
// it. Number counts from 1 within the intent, in the order of the writes;
// At is the store's time of the write (the database's clock).
type IntentEvent struct {
	Number int
	At     time.Time
	Action IntentAction
	Actor  Actor
}

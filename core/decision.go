package core

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidDecision means a decision's fields contradict its status. The
// policy never makes one; a store refuses to write one, before it writes
// anything, so a defect in the executor shows as this error instead of as a
// contradictory intent or a schema constraint failing mid-transaction.
var ErrInvalidDecision = errors.New("invalid decision")

// Valid reports whether r is one of the ways a policy can exhaust an intent.
func (r ExhaustedReason) Valid() bool {
	switch r {
	case ExhaustedDeadlineExceeded, ExhaustedMaxAttempts, ExhaustedOneShotCompleted:
		return true
	}
	return false
}

// Validate is the one home of the rule for a well-formed decision, the
// shape Decide always produces and both stores' schemas hold an intent to:
// pending with a next due time and nothing else; accepted or rejected with
// a final outcome of the same status and nothing else; exhausted with one
// of the exhausted reasons and nothing else. Each store calls it (through
// the ports' Validate methods) before it writes a decision. The final
// outcome itself is trusted as it comes, as every Outcome is: NewOutcome
// built it. PossiblyAccepted goes with any status; AcceptedAfterDeadline
// only with exhausted by deadline_exceeded (the one decision that can follow
// an acceptance without accepting), and AcceptedMessageID only with it.
func (d Decision) Validate() error {
	if err := d.validateLateAcceptance(); err != nil {
		return err
	}
	switch d.Status {
	case StatusPending:
		if d.NextDueAt.IsZero() {
			return invalidDecision(d, "has no next due time")
		}
		if d.FinalOutcome != nil || d.ExhaustedReason != "" {
			return invalidDecision(d, "has a final outcome or an exhausted reason")
		}
	case StatusAccepted, StatusRejected:
		if d.FinalOutcome == nil {
			return invalidDecision(d, "has no final outcome")
		}
		if string(d.FinalOutcome.Status) != string(d.Status) {
			return invalidDecision(d, fmt.Sprintf("has a %s final outcome", d.FinalOutcome.Status))
		}
		if d.ExhaustedReason != "" || !d.NextDueAt.IsZero() {
			return invalidDecision(d, "has an exhausted reason or a next due time")
		}
	case StatusExhausted:
		if !d.ExhaustedReason.Valid() {
			return invalidDecision(d, fmt.Sprintf("has the exhausted reason %q", d.ExhaustedReason))
		}
		if d.FinalOutcome != nil || !d.NextDueAt.IsZero() {
			return invalidDecision(d, "has a final outcome or a next due time")
		}
	default:
		return fmt.Errorf("%w: unknown status %q", ErrInvalidDecision, d.Status)
	}
	return nil
}

// validateLateAcceptance is the part of Validate about an acceptance that
// came at or after the deadline.
func (d Decision) validateLateAcceptance() error {
	switch {
	case d.AcceptedMessageID != "" && !d.AcceptedAfterDeadline:
		return invalidDecision(d, "has an accepted message id without an acceptance after the deadline")
	case d.AcceptedAfterDeadline && (d.Status != StatusExhausted || d.ExhaustedReason != ExhaustedDeadlineExceeded):
		return fmt.Errorf("%w: %s decision (%s) has an acceptance after the deadline, which only %s with %s can have",
			ErrInvalidDecision, d.Status, d.ExhaustedReason, StatusExhausted, ExhaustedDeadlineExceeded)
	}
	return nil
}

// ValidateDeferral is the rule for the decision of a deferral, an attempt
// moved without being made (see DecideDeferral): a well-formed decision
// that is pending, or exhausted by the deadline rule. No other end can
// come of an attempt that was not made, and no acceptance either.
func (d Decision) ValidateDeferral() error {
	if err := d.Validate(); err != nil {
		return err
	}
	if d.AcceptedAfterDeadline {
		return fmt.Errorf("%w: a deferral made no attempt, so nothing was accepted after the deadline", ErrInvalidDecision)
	}
	if d.Status == StatusPending ||
		(d.Status == StatusExhausted && d.ExhaustedReason == ExhaustedDeadlineExceeded) {
		return nil
	}
	return fmt.Errorf("%w: a deferral is pending or exhausted with %s, not %s with %s",
		ErrInvalidDecision, ExhaustedDeadlineExceeded, d.Status, d.ExhaustedReason)
}

// LastTryLead is how long before its deadline an intent that gateway
// protection keeps deferring gets its last try: an open breaker lets the
// attempts of that last second through (LastTry), so an outage that ends
// before then costs no intent. A second leaves a loaded leader time to
// dispatch and reserve the attempt, which must start strictly before the
// deadline, and a gateway time to answer before it.
const LastTryLead = time.Second

// DecideDeferral is the decision, at now, for an attempt moved to until
// without being made (its gateway's breaker is open, or the gateway is
// paused). It spends no try, so only the deadline can end the intent, and
// only when no try can start strictly before it any more: an intent
// deferred to until strictly before the deadline of a window that opened
// at windowStart (see DeadlinePassed) is pending until then; one whose
// until would miss the deadline is pending until its last try (LastTryLead
// before the deadline) while that is still ahead; otherwise it is
// exhausted with deadline_exceeded.
func DecideDeferral(c Contract, windowStart, until, now time.Time) Decision {
	if !DeadlinePassed(c, windowStart, until) {
		return Decision{Status: StatusPending, NextDueAt: until}
	}
	deadline, _ := c.Deadline(windowStart)
	if last := deadline.Add(-LastTryLead); now.Before(last) {
		return Decision{Status: StatusPending, NextDueAt: last}
	}
	return Decision{Status: StatusExhausted, ExhaustedReason: ExhaustedDeadlineExceeded}
}

// LastTry reports whether an attempt due at now is its intent's last try:
// the contract has a deadline (of a window that opened at windowStart) and
// now lies in the LastTryLead before it. The gateway protection's circuit
// breaker lets such an attempt through even while open: deferring it again
// would end the intent without a try the gateway may well have taken. It
// also returns that deadline, until which the protection remembers the
// last try taken.
func LastTry(c Contract, windowStart, now time.Time) (deadline time.Time, last bool) {
	deadline, ok := c.Deadline(windowStart)
	if !ok || !now.Before(deadline) || now.Before(deadline.Add(-LastTryLead)) {
		return time.Time{}, false
	}
	return deadline, true
}

func invalidDecision(d Decision, problem string) error {
	return fmt.Errorf("%w: %s decision %s", ErrInvalidDecision, d.Status, problem)
}

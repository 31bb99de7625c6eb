package core

import "time"

// AttemptResult is what one attempt produced: a well-formed outcome, or an
// error (transport failure, timeout, invalid answer). Exactly one is set.
type AttemptResult struct {
	Outcome *Outcome
	Err     error
}

// Decision is the policy's verdict after an attempt: the intent's new status,
// and either when the next attempt is due or why the intent ended.
type Decision struct {
	Status          IntentStatus
	FinalOutcome    *Outcome
	ExhaustedReason ExhaustedReason
	// NextDueAt is set only when Status is pending.
	NextDueAt time.Time
	// PossiblyAccepted, when true, records on the intent (for good) that
	// the gateway may have accepted an earlier attempt whose answer was
	// lost (see PossiblyAccepted). It never changes the status.
	PossiblyAccepted bool
	// AcceptedAfterDeadline records on the intent that the gateway accepted
	// this attempt at or after the acceptance deadline: the spec exhausts
	// the intent (deadline_exceeded), yet the gateway took the message and
	// may deliver it, so resending it could deliver it twice. Set only by
	// Decide, with that exhausted decision; AcceptedMessageID is the
	// gateway's message reference of that acceptance (empty when it gave
	// none). Like PossiblyAccepted it never changes the status.
	AcceptedAfterDeadline bool
	AcceptedMessageID     string
}

// DeadlinePassed is the deadline cut-off, the one home of "strictly
// before": an attempt may start, an acceptance counts and a retry is
// scheduled only strictly before the acceptance deadline. It reports
// whether at is not strictly before the deadline of c for a window that
// opened at windowStart (Intent.DeadlineStart); a contract without a
// deadline never passes one.
func DeadlinePassed(c Contract, windowStart, at time.Time) bool {
	deadline, ok := c.Deadline(windowStart)
	return ok && !at.Before(deadline)
}

// Decide applies the contract's policy to an attempt that finished at
// finishedAt. tries counts the intent's tries so far (Tries), this attempt
// included when it was sent; retryDelay is the delay the retry policy
// proposes for that count. It is a pure function: the same inputs always
// yield the same decision.
//
// Accepted ends the intent, except under the deadline policy when the
// acceptance came at or after the deadline, which exhausts it: the status
// is the spec's, and the acceptance itself is kept beside it as
// AcceptedAfterDeadline, since the gateway has the message. A rejection
// listed in terminalOutcomes rejects it. Everything else (other rejections,
// invalid answers, transport errors) is non-terminal and retried while the
// policy allows. An outcome is trusted as given: NewOutcome, where the answer
// entered the core, already refused every malformed one.
func Decide(c Contract, createdAt time.Time, tries int, finishedAt time.Time, r AttemptResult, retryDelay time.Duration) Decision {
	if r.Err == nil && r.Outcome != nil {
		o := *r.Outcome
		switch {
		case o.Status == OutcomeAccepted:
			if DeadlinePassed(c, createdAt, finishedAt) {
				return Decision{Status: StatusExhausted, ExhaustedReason: ExhaustedDeadlineExceeded,
					AcceptedAfterDeadline: true, AcceptedMessageID: o.MessageID}
			}
			return Decision{Status: StatusAccepted, FinalOutcome: &o}
		case o.Status == OutcomeRejected && c.IsTerminalReason(o.Reason):
			return Decision{Status: StatusRejected, FinalOutcome: &o}
		}
	}
	return decideRetry(c, createdAt, tries, finishedAt.Add(retryDelay))
}

// decideRetry decides what follows a non-terminal attempt.
func decideRetry(c Contract, createdAt time.Time, tries int, nextDue time.Time) Decision {
	switch c.Policy {
	case PolicyDeadline:
		return dueUnlessDeadline(c, createdAt, nextDue)
	case PolicyMaxAttempts:
		if tries < c.MaxAttempts {
			return Decision{Status: StatusPending, NextDueAt: nextDue}
		}
		return Decision{Status: StatusExhausted, ExhaustedReason: ExhaustedMaxAttempts}
	default: // PolicyOneShot, and any policy the registry would have refused.
		return Decision{Status: StatusExhausted, ExhaustedReason: ExhaustedOneShotCompleted}
	}
}

// dueUnlessDeadline keeps an intent pending until due, or exhausts it with
// deadline_exceeded when due is not strictly before its deadline: what
// follows a non-terminal attempt under the deadline policy, and any
// deferral.
func dueUnlessDeadline(c Contract, windowStart, due time.Time) Decision {
	if DeadlinePassed(c, windowStart, due) {
		return Decision{Status: StatusExhausted, ExhaustedReason: ExhaustedDeadlineExceeded}
	}
	return Decision{Status: StatusPending, NextDueAt: due}
}

// RetryPolicy decides how long to wait before the next attempt. It is an
// internal execution policy chosen by the operator, never a contract term and
// never shown in an API representation.
type RetryPolicy interface {
	// Delay returns the wait after an intent's tries-th try (from 1). It is
	// given tries (Tries), never an attempt number: an attempt that never
	// reached the gateway must not grow the wait.
	Delay(tries int) time.Duration
}

// DefaultRetryDelay is the fixed delay between attempts unless the operator
// configures another.
const DefaultRetryDelay = 5 * time.Second

// FixedDelay waits the same time after every attempt.
type FixedDelay time.Duration

// Delay implements RetryPolicy.
func (d FixedDelay) Delay(int) time.Duration { return time.Duration(d) }

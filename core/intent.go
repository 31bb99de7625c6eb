package core

import (
	"encoding/json"
	"time"
)

// IntentStatus is an orchestration decision derived from gateway outcomes and
// the contract's policy. It is never an alias of a gateway status.
type IntentStatus string

// The intent statuses. Every status but pending is terminal and final.
const (
	StatusPending   IntentStatus = "pending"
	StatusAccepted  IntentStatus = "accepted"
	StatusRejected  IntentStatus = "rejected"
	StatusExhausted IntentStatus = "exhausted"
)

// Terminal reports whether no further attempt may run for an intent in s.
func (s IntentStatus) Terminal() bool { return s != StatusPending }

// Valid reports whether s is one of the four statuses.
func (s IntentStatus) Valid() bool {
	switch s {
	case StatusPending, StatusAccepted, StatusRejected, StatusExhausted:
		return true
	}
	return false
}

// ExhaustedReason explains which policy rule ended an intent without
// acceptance or terminal rejection. It describes policy, not gateway failure.
type ExhaustedReason string

// The ways a policy can exhaust an intent.
const (
	ExhaustedDeadlineExceeded ExhaustedReason = "deadline_exceeded"
	ExhaustedMaxAttempts      ExhaustedReason = "max_attempts_reached"
	ExhaustedOneShotCompleted ExhaustedReason = "one_shot_completed"
)

// Outcome is a well-formed gateway answer: accepted, or rejected with a
// reason. MessageID is recorded when the gateway sent one. A gateway's answer
// becomes an Outcome only through NewOutcome, which holds the rule; every
// later layer trusts it.
type Outcome struct {
	Status    OutcomeStatus `json:"status"`
	Reason    string        `json:"reason,omitempty"`
	MessageID string        `json:"messageId,omitempty"`
}

// Attempt is one submission of an intent to its gateway. Attempts are
// append-only: an attempt is recorded as started before the gateway is called
// and finished exactly once, with either an outcome or an error.
type Attempt struct {
	// Number counts from 1 within the intent.
	Number    int
	StartedAt time.Time
	// FinishedAt is zero while the attempt is in flight (or was cut off by a
	// crash and not yet closed by the next leader's rebuild).
	FinishedAt time.Time
	// Outcome is set when the gateway gave a well-formed answer.
	Outcome *Outcome
	// Error is set when the attempt produced no well-formed outcome:
	// transport errors, timeouts, invalid answers, unknown results.
	Error string
	// Sent tells whether the attempt reached for the gateway (its call was
	// made, or may have been). Only sent attempts are tries.
	Sent bool
	// HolderID and Epoch name the leader that made the attempt under its
	// lease: the audit trail of fencing. They are empty when a store does
	// not report them.
	HolderID string
	Epoch    int64
}

// Finished reports whether the attempt has been closed.
func (a Attempt) Finished() bool { return !a.FinishedAt.IsZero() }

// Tried reports whether the attempt counts as a try: it was sent, or it is
// still open, so its gateway call may have been made. Only an attempt
// closed as never sent is no try.
func (a Attempt) Tried() bool { return a.Sent || !a.Finished() }

// Tries counts how many of an intent's first n attempts were tries: every
// attempt except those closed as never sent (Sent false). An attempt still
// open counts, because its gateway call may have been made. attempts are the
// intent's loaded attempts; a caller holding none of them (a cached intent)
// gets n, and must know that none of the n was left unsent. Only data
// decides: an attempt's Error text never does.
func Tries(n int, attempts []Attempt) int {
	tries := n
	for _, a := range attempts {
		if a.Number <= n && !a.Tried() {
			tries--
		}
	}
	return tries
}

// Intent is the client's unit of work together with everything
// SubmissionManager decided about it.
type Intent struct {
	IntentID         string
	SubmissionTarget string
	// Payload is the compacted JSON the client sent: what is stored, compared
	// for idempotency and forwarded to the gateway.
	Payload   json.RawMessage
	CreatedAt time.Time
	Status    IntentStatus
	// Contract is the snapshot taken at submission; execution routes by it.
	Contract Contract
	// NotBefore is the client's earliest time for the first attempt; zero
	// when the client named none. See WithNotBefore.
	NotBefore time.Time
	// NextDueAt is when the next attempt is due; zero once terminal.
	NextDueAt time.Time
	// AttemptCount is authoritative even when Attempts is not loaded.
	AttemptCount int
	Attempts     []Attempt
	// FinalOutcome is meaningful only for accepted and rejected intents.
	FinalOutcome *Outcome
	// ExhaustedReason is set only for exhausted intents.
	ExhaustedReason ExhaustedReason
	// PossiblyAccepted records that the gateway may have accepted an
	// earlier attempt whose answer was lost (see core.PossiblyAccepted).
	PossiblyAccepted bool
	// AcceptedAfterDeadline records that the gateway accepted an attempt
	// at or after the acceptance deadline (the intent is exhausted, as the
	// spec says, yet the gateway has the message); AcceptedMessageID is the
	// gateway's message reference of that acceptance, when it gave one.
	// See Decision.AcceptedAfterDeadline.
	AcceptedAfterDeadline bool
	AcceptedMessageID     string
	// LastModifiedAt is the store's change marker, strictly increasing in
	// commit order (the database's or the store's writer's clock); it is
	// informational for the core and drives the leader's refresh cursor.
	LastModifiedAt time.Time
	// ResubmittedFrom names the ended intent this one resubmits, and
	// ResubmittedAs the intent that resubmitted this one; both are empty
	// when there is no such link. The application service fills them from
	// the store's resubmission links.
	ResubmittedFrom string
	ResubmittedAs   string
	// TraceParent is the W3C trace context the intent was submitted in
	// (NormalizeTraceParent's form), or empty. It is opaque to the core:
	// kept with the intent so that its attempts' spans and gateway calls
	// join the submitting trace, and never part of an idempotent repeat's
	// comparison (a retried request carries a new one).
	TraceParent string
	// Events are the operator's actions on the intent (cancel, run now),
	// oldest first. The application service fills them from the store on
	// a read of one intent; listings leave them out.
	Events []IntentEvent
}

// LastAttempt returns the most recent attempt, if the attempts are loaded.
func (i Intent) LastAttempt() (Attempt, bool) {
	if len(i.Attempts) == 0 {
		return Attempt{}, false
	}
	return i.Attempts[len(i.Attempts)-1], true
}

// NewIntent builds the pending intent for an accepted submission. The first
// attempt is due at once.
func NewIntent(intentID string, contract Contract, payload json.RawMessage, now time.Time) Intent {
	return Intent{
		IntentID:         intentID,
		SubmissionTarget: contract.SubmissionTarget,
		Payload:          payload,
		CreatedAt:        now,
		Status:           StatusPending,
		Contract:         contract.Clone(),
		NextDueAt:        now,
	}
}

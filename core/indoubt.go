package core

import "slices"

// Attempts in doubt: an attempt that reached for its gateway and whose
// answer never arrived may have been accepted. A leader crashed or was cut
// off during the call (the next leader closes the attempt with its outcome
// unknown), or the connection broke or timed out after the request went
// out, or the answer could not be read. When a later attempt of the same
// intent is then refused as duplicate_reference, that acceptance is likely.
// The spec keeps duplicate_reference non-terminal, so the intent's status
// does not change; the fact is recorded instead, as PossiblyAccepted on the
// intent. Whether an attempt is in doubt is read from its data (sent, no
// outcome), never from the wording of its error.

// InDoubt reports whether a finished attempt was sent and got no outcome:
// the gateway may have acted on it.
func InDoubt(a Attempt) bool { return a.Finished() && a.Sent && a.Outcome == nil }

// PossiblyAccepted reports whether an attempt's result, coming after the
// given earlier attempts of the same intent, means the gateway may have
// accepted an earlier attempt whose answer was lost: it refused this
// attempt's reference as a duplicate after an attempt in doubt. It is a
// pure rule; the engine puts its verdict on the Decision and the store keeps
// it with the fenced write.
func PossiblyAccepted(earlier []Attempt, r AttemptResult) bool {
	return r.Err == nil && r.Outcome != nil &&
		r.Outcome.Status == OutcomeRejected && r.Outcome.Reason == ReasonDuplicateReference &&
		slices.ContainsFunc(earlier, InDoubt)
}

// LookupAnswer is what a gateway's lookup says about a reference whose
// attempt is in doubt.
type LookupAnswer int

// The lookup answers. LookupUnsupported covers every answer that is not a
// clear statement (no such route, an error, an unreadable body): then the
// leader does what it would do without a lookup.
const (
	LookupUnsupported LookupAnswer = iota
	// LookupNeverReceived: the gateway states it never received the
	// reference, so a retry cannot be a duplicate.
	LookupNeverReceived
	// LookupKnown: the gateway gave the reference an outcome, which closes
	// the attempt in doubt as if its answer had arrived.
	LookupKnown
)

package core

// Attempts in doubt: an attempt that a leader started and never finished
// (the leader crashed or was cut off during the gateway call) is closed by
// the next leader with its outcome unknown. The gateway may have accepted
// it; when a later attempt of the same intent is then refused as
// duplicate_reference, that acceptance is likely. The spec keeps
// duplicate_reference non-terminal, so the intent's status does not change;
// the fact is recorded instead, as PossiblyAccepted on the intent.

// PossiblyAccepted reports whether an attempt's result, coming after
// inDoubtBefore attempts of the same intent that were closed with their
// outcome unknown, means the gateway may have accepted an earlier attempt
// whose answer was lost: it refused this attempt's reference as a
// duplicate. It is a pure rule; the engine puts its verdict on the
// Decision and the store keeps it with the fenced write.
func PossiblyAccepted(inDoubtBefore int, r AttemptResult) bool {
	return inDoubtBefore > 0 && r.Err == nil && r.Outcome != nil &&
		r.Outcome.Status == OutcomeRejected && r.Outcome.Reason == ReasonDuplicateReference
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

package memstore

import (
	"slices"

	"github.com/submissionmanager/submission-manager/core"
)

// cloneIntent deep-copies an intent, so neither a caller's later edits nor
// the store's later writes reach through shared slices or pointers: each read
// is a snapshot, as a row read from SQL is.
func cloneIntent(in *core.Intent) core.Intent {
	out := *in
	out.Payload = slices.Clone(in.Payload)
	out.Contract = in.Contract.Clone()
	out.FinalOutcome = cloneOutcome(in.FinalOutcome)
	out.Attempts = make([]core.Attempt, len(in.Attempts))
	for i, a := range in.Attempts {
		a.Outcome = cloneOutcome(a.Outcome)
		out.Attempts[i] = a
	}
	return out
}

func cloneOutcome(o *core.Outcome) *core.Outcome {
	if o == nil {
		return nil
	}
	c := *o
	return &c
}

package engine

import (
	"context"
	"errors"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// NeverReceivedError is the attempt error recorded when a new leader found
// an attempt in doubt and the gateway's lookup said it never received the
// reference: the attempt is no longer in doubt, and the intent is retried
// as the policy allows, with no risk of a duplicate.
const NeverReceivedError = "not received: the previous leader stopped during the gateway call, and the gateway's lookup says it never received the reference"

// resolveInDoubt decides how an attempt a previous leader left open is
// closed. When the intent's gateway client offers a lookup, the gateway is
// asked what it did with the reference: an outcome it gave closes the
// attempt with that outcome (the policy then judges it as usual, deadline
// rule included), "never received" closes it as not received (a retry
// cannot be a duplicate, and the attempt was no try). Without a lookup, or
// without a clear answer, the attempt is closed with its outcome unknown, as
// before lookups existed. The reach says what the closed attempt counts as.
func (t *term) resolveInDoubt(ctx context.Context, in core.Intent, last core.Attempt) (core.AttemptResult, reach) {
	unknown := core.AttemptResult{Err: errors.New(OutcomeUnknownError)}
	gw, ok := t.cfg.Gateways[in.Contract.GatewayType]
	if !ok {
		return unknown, maybeSent
	}
	lk, ok := gw.(ports.GatewayLookup)
	if !ok {
		return unknown, maybeSent
	}
	res, err := lk.Lookup(ctx, ports.LookupParams{
		GatewayType: in.Contract.GatewayType,
		GatewayURL:  in.Contract.GatewayURL,
		Reference:   in.IntentID,
	})
	if err != nil {
		res = ports.LookupResult{Answer: core.LookupUnsupported}
		t.log.Debug("in_doubt_lookup_failed", "intent_id", in.IntentID, "attempt", last.Number, "error", err.Error())
	}
	switch res.Answer {
	case core.LookupKnown:
		t.cfg.Metrics.InDoubtLookup(in.Contract.GatewayType, "known")
		o := res.Outcome
		t.log.Info("in_doubt_resolved", "intent_id", in.IntentID, "attempt", last.Number,
			"outcome", o.Status, "reason", o.Reason)
		return core.AttemptResult{Outcome: &o}, maybeSent
	case core.LookupNeverReceived:
		t.cfg.Metrics.InDoubtLookup(in.Contract.GatewayType, "never_received")
		t.log.Info("in_doubt_never_received", "intent_id", in.IntentID, "attempt", last.Number)
		return core.AttemptResult{Err: errors.New(NeverReceivedError)}, notSent
	default:
		t.cfg.Metrics.InDoubtLookup(in.Contract.GatewayType, "unsupported")
		return unknown, maybeSent
	}
}

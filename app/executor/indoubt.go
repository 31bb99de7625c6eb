package executor

import (
	"context"
	"errors"
	"time"

	"github.com/submissionmanager/submission-manager/app/clockctx"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// NeverReceivedError is the attempt error recorded when a new leader found
// an attempt in doubt and the gateway's lookup said it never received the
// reference: the attempt is no longer in doubt, and the intent is retried
// as the policy allows, with no risk of a duplicate.
const NeverReceivedError = "not received: the previous leader stopped during the gateway call, and the gateway's lookup says it never received the reference"

// settleInDoubt closes an attempt a previous leader left open (the in-doubt
// path, instead of admit, reserve and call): with a call slot held, since a
// lookup is a call to the same gateway, it asks the gateway what became of
// the reference, then decides and records as any attempt. Without a slot
// (the term stopped) the attempt stays open for the next leader.
func (t *term) settleInDoubt(ctx context.Context, in core.Intent, last core.Attempt, s *slot) result {
	t.log.Warn("attempt_outcome_unknown", "intent_id", in.IntentID, "attempt", last.Number,
		"started_at", last.StartedAt)
	if !s.await(ctx) {
		return result{intentID: in.IntentID} // still in doubt, for the next leader
	}
	r, how := t.resolveInDoubt(ctx, in, last)
	s.release()
	e := ended{result: r, reach: how}
	finishedAt := t.cfg.Clock.Now()
	return t.record(ctx, in, last, e, t.decide(in, last, e, finishedAt), finishedAt)
}

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
	switch res := t.lookup(ctx, in, last); res.Answer {
	case core.LookupKnown:
		o := res.Outcome
		t.log.Info("in_doubt_resolved", "intent_id", in.IntentID, "attempt", last.Number,
			"outcome", o.Status, "reason", o.Reason)
		return core.AttemptResult{Outcome: &o}, maybeSent
	case core.LookupNeverReceived:
		t.log.Info("in_doubt_never_received", "intent_id", in.IntentID, "attempt", last.Number)
		return core.AttemptResult{Err: errors.New(NeverReceivedError)}, notSent
	default:
		return unknown, maybeSent
	}
}

// lostAnswerLookupTimeout bounds the lookup made right after a lost answer.
// A gateway answers it in milliseconds; one that just timed out the call
// may time out its lookup too, and the call's slot is held meanwhile.
const lostAnswerLookupTimeout = 2 * time.Second

// settleLostAnswer asks the gateway's lookup, right after a call of this
// leader's whose answer was lost (ports.ErrAnswerLost: the connection broke
// or timed out after the request could have gone out), whether it accepted
// the reference. An acceptance closes the attempt as accepted, as if its
// answer had arrived: the intent is not retried into duplicate_reference
// and exhausted while the message was delivered. The policy judges it at
// the lookup's time, as after a crash: the gateway may have accepted after
// the call gave up. Only an acceptance is taken. A rejection the lookup
// reports may be an earlier attempt's, and "never received" so soon after
// the call may only mean the gateway has not registered it yet; then the
// attempt stays in doubt, as without a lookup.
func (t *term) settleLostAnswer(ctx context.Context, in core.Intent, a core.Attempt, lost core.AttemptResult) core.AttemptResult {
	if ctx.Err() != nil {
		return lost // stopping: the lookup could not be made either
	}
	lookupCtx, cancel := clockctx.WithTimeout(ctx, t.cfg.Clock, lostAnswerLookupTimeout)
	defer cancel()
	res := t.lookup(lookupCtx, in, a)
	if res.Answer != core.LookupKnown || res.Outcome.Status != core.OutcomeAccepted {
		return lost
	}
	o := res.Outcome
	t.log.Info("lost_answer_resolved", "intent_id", in.IntentID, "attempt", a.Number,
		"outcome", o.Status, "lost", lost.Err.Error())
	return core.AttemptResult{Outcome: &o}
}

// lookup asks the gateway of the intent's contract what it did with the
// intent's reference, when its client offers a lookup, and counts the
// answer. No lookup, a failed one, or no clear statement is
// LookupUnsupported.
func (t *term) lookup(ctx context.Context, in core.Intent, a core.Attempt) ports.LookupResult {
	gt := in.Contract.GatewayType
	lk, ok := t.cfg.Gateways[gt].(ports.GatewayLookup)
	if !ok {
		return ports.LookupResult{Answer: core.LookupUnsupported}
	}
	res, err := lk.Lookup(ctx, ports.LookupParams{
		GatewayType: gt, GatewayURL: in.Contract.GatewayURL, Reference: in.IntentID, TraceParent: in.TraceParent,
	})
	if err != nil {
		t.log.Debug("in_doubt_lookup_failed", "intent_id", in.IntentID, "attempt", a.Number, "error", err.Error())
		res = ports.LookupResult{Answer: core.LookupUnsupported}
	}
	switch res.Answer {
	case core.LookupKnown:
		t.cfg.Metrics.InDoubtLookup(gt, "known")
	case core.LookupNeverReceived:
		t.cfg.Metrics.InDoubtLookup(gt, "never_received")
	default:
		t.cfg.Metrics.InDoubtLookup(gt, "unsupported")
	}
	return res
}

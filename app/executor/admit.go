package executor

import (
	"context"
	"time"

	"github.com/submissionmanager/submission-manager/app/clockctx"
	"github.com/submissionmanager/submission-manager/app/protection"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// admit is the pipeline's gate: it asks the gateway protection whether the
// attempt may call its gateway now (the scheduler judged it at dispatch
// when it could, so that a probe, a rate token or room at the gateway goes
// to the earliest due attempt). With the protection off, every attempt is
// admitted without a verdict. An attempt not admitted ends here: deferred
// through the store (no attempt row, no try spent), or held in the schedule
// without any write. stale reports a deferral the store refused because the
// cached state was out of date.
func (t *term) admit(ctx context.Context, in core.Intent, fromCache bool, s *slot) (vd *protection.Verdict, res result, admitted, stale bool) {
	if !t.gates.Active() {
		return nil, res, true, false
	}
	now := t.cfg.Clock.Now()
	var v protection.Verdict
	if s.admitted != nil {
		// Judged by the scheduler at dispatch, in dispatch order. A stale
		// cached state sends the worker through again, to be judged afresh.
		v, s.admitted = *s.admitted, nil
	} else {
		v = t.gates.Admit(in, now)
	}
	switch v.Kind {
	case protection.Call:
		return &v, res, true, false
	case protection.Defer:
		res, stale = t.deferAttempt(ctx, in, v.Until, fromCache)
		return nil, res, false, stale
	case protection.WaitUntil:
		s.skip()
		return nil, t.held(in, v.Until), false, false
	default: // protection.WaitFree
		s.skip()
		res = t.held(in, now)
		res.park = in.Contract.GatewayURL
		return nil, res, false, false
	}
}

// deferAttempt moves a due attempt to until without making it: no attempt
// row, no try spent. The contract's policy still decides: when until is not
// strictly before the intent's deadline, the intent is exhausted with
// deadline_exceeded, as a failed attempt at this moment would have been.
func (t *term) deferAttempt(ctx context.Context, in core.Intent, until time.Time, fromCache bool) (result, bool) {
	d := t.deferral(in, until)
	t.log.Debug("attempt_deferred", "intent_id", in.IntentID, "gateway_url", in.Contract.GatewayURL,
		"status", d.Status, "next_due_at", d.NextDueAt)
	outlives := context.WithoutCancel(ctx)
	writeCtx, cancel := clockctx.Outliving(ctx, t.cfg.Clock, t.cfg.FinishTimeout)
	err := t.cfg.Store.Reschedule(writeCtx, ports.RescheduleParams{
		Fence: t.fence, IntentID: in.IntentID, AttemptCount: in.AttemptCount, Decision: d,
	})
	cancel()
	res, stale, ok := t.written(outlives, "defer", in, 0, err, fromCache)
	if !ok {
		return res, stale
	}
	if d.Status.Terminal() {
		t.cfg.Metrics.IntentCompleted(in.SubmissionTarget, d.Status, string(d.ExhaustedReason))
		return res, false
	}
	return t.held(in, d.NextDueAt), false
}

// deferral is the decision for an attempt moved to until without being
// made: the contract's deferral rule (core.DecideDeferral).
func (t *term) deferral(in core.Intent, until time.Time) core.Decision {
	return core.DecideDeferral(in.Contract, in.DeadlineStart(), until, t.cfg.Clock.Now())
}

// held keeps an intent in the leader's schedule at due without any write.
// The known-intent cache takes its state when its attempt count is its
// number of tries (the cache keeps no attempts).
func (t *term) held(in core.Intent, due time.Time) result {
	res := result{intentID: in.IntentID, next: &core.ScheduleEntry{IntentID: in.IntentID, DueAt: due, Mode: in.Contract.Mode}}
	if core.Tries(in.AttemptCount, in.Attempts) == in.AttemptCount {
		k := in
		k.Attempts, k.NextDueAt = nil, due
		res.known = &k
	}
	return res
}

// roomFreed marks the result of an admitted attempt, which freed room at its
// gateway: the scheduler gives parked attempts of that gateway their turn.
func (t *term) roomFreed(res result, vd *protection.Verdict, in core.Intent) result {
	if vd != nil {
		res.released = in.Contract.GatewayURL
	}
	return res
}

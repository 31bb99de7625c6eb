package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/submissionmanager/submission-manager/app/clockctx"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// OutcomeUnknownError is the attempt error recorded when a new leader finds
// an attempt that was started but never finished: the previous leader may or
// may not have reached the gateway, so the outcome is unknown and the policy
// treats it like any other non-terminal attempt error.
const OutcomeUnknownError = "outcome unknown: the previous leader stopped during the gateway call"

// NotSubmittedError is the attempt error recorded when the leader reserved an
// attempt but lost its leadership before calling the gateway: the gateway was
// never called, and the intent stays due at once for the next leader. The
// text is for people; the attempt's Sent field, false, is what keeps it from
// counting as a try.
const NotSubmittedError = "not submitted: leadership was lost before the gateway call"

// NotCalledError is the attempt error recorded when the leader reserved an
// attempt ahead of a free call slot (slots.go) and stopped leading or shut
// down before the slot came: like NotSubmittedError, the gateway was never
// called and the intent stays due at once.
const NotCalledError = "not submitted: the executor stopped before the gateway call"

// DeadlinePassedError is the attempt error recorded when an attempt fell due
// only after its intent's acceptance deadline (no leader executed while the
// deadline passed): the gateway is not called and the intent is exhausted.
const DeadlinePassedError = "not submitted: the acceptance deadline had passed"

// reach says how far an attempt got toward its gateway, which decides what
// it counts as: a try (sent, stored as the attempt's Sent) and a latency
// sample (called).
type reach int

const (
	// notSent: the gateway was not called. The attempt is no try.
	notSent reach = iota
	// maybeSent: a previous leader stopped during the call, which may have
	// reached the gateway: a try, but without a latency to observe.
	maybeSent
	// called: this leader called the gateway and has its result.
	called
)

func (r reach) sent() bool { return r != notSent }

// attempt runs in a worker goroutine: it takes the intent's state from the
// known-intent cache when the scheduler had it (cached: pending, all its
// attempts finished and sent), else reads it afresh from the store (the
// truth; the schedule is only a cache), and either closes an attempt a
// previous leader left open, or runs the next attempt. A cached state needs
// no read because the fenced StartAttempt succeeds only if the stored
// attempt count still matches; if it does not, the intent is read afresh.
//
// s is the attempt's way to its call slot (slots.go): every gateway call,
// an in-doubt lookup included, waits for one, and gives it back as soon as
// the gateway answered.
func (t *term) attempt(ctx context.Context, entry core.ScheduleEntry, cached *core.Intent, s *slot) result {
	res := result{intentID: entry.IntentID}
	var in core.Intent
	if cached != nil {
		in = *cached
	} else {
		var err error
		in, err = t.cfg.Store.GetIntent(ctx, entry.IntentID)
		switch {
		case err == nil:
		case isStopping(ctx, err):
			return res
		case errors.Is(err, core.ErrIntentNotFound):
			t.log.Warn("scheduled_intent_missing", "intent_id", entry.IntentID)
			return res
		default:
			res.err = fmt.Errorf("engine: read intent %q: %w", entry.IntentID, err)
			return res
		}
		if in.Status.Terminal() {
			return res // terminal intents are append-only
		}
	}
	if in.NextDueAt.After(t.cfg.Clock.Now()) {
		// A stale entry (an old notification or row): the intent is due later.
		res.next = &core.ScheduleEntry{IntentID: in.IntentID, DueAt: in.NextDueAt, Mode: in.Contract.Mode}
		if cached != nil {
			res.known = cached
		}
		return res
	}
	if !t.stillLeader() {
		res.err = errNotLeader("before an attempt")
		return res
	}
	if last, ok := in.LastAttempt(); ok && !last.Finished() {
		t.log.Warn("attempt_outcome_unknown", "intent_id", in.IntentID, "attempt", last.Number,
			"started_at", last.StartedAt)
		if !s.await(ctx) {
			return res // still in doubt, for the next leader
		}
		r, how := t.resolveInDoubt(ctx, in, last)
		s.release()
		return t.finish(ctx, in, last, r, how, time.Time{})
	}
	res, stale := t.guarded(ctx, in, cached != nil, s)
	if stale {
		// The cached state was stale: read the intent and try again. With
		// the gateway protection on, the gates judge this second pass in
		// the worker, out of dispatch order: a rare case, an intent changed
		// behind the leader's back.
		return t.attempt(ctx, entry, nil, s)
	}
	return res
}

// execute reserves the next attempt in the store, calls the gateway and records
// the result. The reservation comes first, so a crash during the call leaves
// an open attempt for the next leader to close instead of a silent resend.
// The attempt's StartedAt is its reservation's time; reserved ahead, its
// call may come later by the wait for a slot, so the deadline and the
// first-attempt lateness are read at the call.
//
// fromCache says in came from the known-intent cache; then a refused
// reservation (the intent moved on) is reported as stale instead of logged,
// and the caller reads the intent from the store.
func (t *term) execute(ctx context.Context, in core.Intent, fromCache bool, tk *ticket, s *slot) (res result, stale bool) {
	res = result{intentID: in.IntentID}
	if t.slots.stopped() {
		return res, false // draining or lost: nothing new is reserved
	}
	a := core.Attempt{Number: in.AttemptCount + 1, StartedAt: t.cfg.Clock.Now()}
	err := t.cfg.Store.StartAttempt(ctx, ports.StartAttemptParams{
		Fence: t.fence, IntentID: in.IntentID, Number: a.Number, StartedAt: a.StartedAt,
	})
	switch {
	case err == nil:
	case errors.Is(err, core.ErrFenced):
		t.cfg.Metrics.FencedWrite()
		res.err = fmt.Errorf("engine: start attempt %d of %q: %w", a.Number, in.IntentID, err)
		return res, false
	case errors.Is(err, core.ErrIntentNotRunnable) && fromCache:
		return res, true
	case errors.Is(err, core.ErrIntentNotRunnable):
		t.log.Warn("attempt_not_runnable", "intent_id", in.IntentID, "attempt", a.Number, "error", err.Error())
		return res, false
	case isStopping(ctx, err):
		return res, false
	default:
		res.err = fmt.Errorf("engine: start attempt %d of %q: %w", a.Number, in.IntentID, err)
		return res, false
	}
	if !s.await(ctx) {
		// The term stopped while the reservation waited for a call slot:
		// closed as never sent, the intent due at once for the next leader.
		return t.close(ctx, in, a, NotCalledError, dueAtOnce(a)), false
	}
	now := t.cfg.Clock.Now()
	if deadline, ok := in.Contract.Deadline(in.DeadlineStart()); ok && !now.Before(deadline) {
		// Due only after the deadline (no leader ran while it passed, or it
		// passed while the reservation waited for its slot): an acceptance
		// now could not count, so the gateway is not called and the policy
		// exhausts the intent. The slot is given back before the write.
		s.release()
		return t.finish(ctx, in, a, core.AttemptResult{Err: errors.New(DeadlinePassedError)}, notSent, time.Time{}), false
	}
	if !t.stillLeader() {
		// Paused or slow between the reservation and the call: the lease may
		// be gone, so the gateway is not called. The attempt is closed (still
		// through the fence) as never sent, and the intent stays due at once
		// for the next leader: an attempt that never reached the gateway is
		// no reason to retry later or to exhaust.
		s.release()
		r := t.close(ctx, in, a, NotSubmittedError, dueAtOnce(a))
		if r.err == nil {
			r.err, r.next, r.known = errNotLeader("between the attempt's reservation and the gateway call"), nil, nil
		}
		return r, false
	}
	if tk != nil {
		if until, reason, closed := t.gates.recheck(in.Contract, tk.verdict, now); closed {
			// The gateway was paused or its breaker opened while the
			// attempt waited for its slot: not called, and no try.
			s.release()
			t.gates.noteDeferred(in.Contract.GatewayURL, reason)
			return t.close(ctx, in, a, "not submitted: "+reason+" before the gateway call", t.deferral(in, until)), false
		}
	}
	if a.Number == 1 {
		t.cfg.Metrics.FirstAttemptLateness(now.Sub(in.DeadlineStart()))
	}
	if t.debug {
		t.log.Debug("attempt_started", "intent_id", in.IntentID, "attempt", a.Number,
			"gateway_type", in.Contract.GatewayType, "gateway_url", in.Contract.GatewayURL)
	}
	calledAt := t.cfg.Clock.Now()
	r := t.call(ctx, in, tk)
	if errors.Is(r.Err, ports.ErrAnswerLost) {
		// Asked with the slot still held, as a lookup after a crash is:
		// it is a call to the same gateway.
		r = t.settleLostAnswer(ctx, in, a, r)
	}
	s.release()
	return t.finish(ctx, in, a, r, called, calledAt), false
}

// submit calls the gateway named by the intent's contract snapshot, never by
// the registry. The outcome is trusted as given: the gateway adapter built it
// with core.NewOutcome and returned an error for any invalid answer.
func (t *term) submit(ctx context.Context, in core.Intent) core.AttemptResult {
	gw, ok := t.cfg.Gateways[in.Contract.GatewayType]
	if !ok {
		return core.AttemptResult{Err: fmt.Errorf("no gateway configured for gateway type %q", in.Contract.GatewayType)}
	}
	o, err := gw.Submit(ctx, ports.SubmitParams{
		GatewayType: in.Contract.GatewayType,
		GatewayURL:  in.Contract.GatewayURL,
		Reference:   in.IntentID,
		Payload:     in.Payload,
	})
	if err != nil {
		return core.AttemptResult{Err: err}
	}
	return core.AttemptResult{Outcome: &o}
}

// finish applies the policy to the attempt's result and writes both in one
// fenced FinishAttempt. The write outlives the term's cancellation for up to
// FinishTimeout, so a result the gateway gave is recorded even at shutdown,
// yet still only while this term's lease holds. The policy counts tries, not
// attempts: an attempt that was not sent neither counts nor grows the retry
// delay (it waits none; it only ever comes here past a deadline, which
// exhausts the intent).
func (t *term) finish(ctx context.Context, in core.Intent, a core.Attempt, r core.AttemptResult, how reach, calledAt time.Time) result {
	finishedAt := t.cfg.Clock.Now()
	tries := core.Tries(a.Number-1, in.Attempts)
	var delay time.Duration
	if how.sent() {
		tries++
		delay = t.retryFor(in.Contract).Delay(tries)
	}
	d := core.Decide(in.Contract, in.DeadlineStart(), tries, finishedAt, r, delay)
	d.PossiblyAccepted = core.PossiblyAccepted(in.Attempts, r)
	return t.record(ctx, in, a, finishedAt, r, d, how, calledAt)
}

// dueAtOnce is the decision for an attempt that never reached the gateway
// because this leader stopped: the intent stays pending, due at once for the
// next leader, with no retry delay.
func dueAtOnce(a core.Attempt) core.Decision {
	return core.Decision{Status: core.StatusPending, NextDueAt: a.StartedAt}
}

// close records an attempt that never reached the gateway with the decision
// given, instead of the policy's: the attempt was not a try.
func (t *term) close(ctx context.Context, in core.Intent, a core.Attempt, why string, d core.Decision) result {
	return t.record(ctx, in, a, t.cfg.Clock.Now(), core.AttemptResult{Err: errors.New(why)}, d, notSent, time.Time{})
}

// record writes the attempt's result and the decision in one fenced
// FinishAttempt and tells the scheduler what follows. calledAt, for an
// attempt this leader called, is when the call began: the latency sample
// runs from there to finishedAt, not from the reservation (StartedAt),
// which may precede the call by the wait for a slot.
func (t *term) record(ctx context.Context, in core.Intent, a core.Attempt, finishedAt time.Time, r core.AttemptResult, d core.Decision, how reach, calledAt time.Time) result {
	res := result{intentID: in.IntentID}
	p := ports.FinishAttemptParams{
		Fence: t.fence, IntentID: in.IntentID, Number: a.Number, FinishedAt: finishedAt,
		Outcome: r.Outcome, Decision: d, Sent: how.sent(),
	}
	if r.Err != nil {
		p.Error = r.Err.Error()
		if p.Error == "" {
			p.Error = "attempt failed without an error message"
		}
	}
	writeCtx, cancel := clockctx.WithTimeout(context.WithoutCancel(ctx), t.cfg.Clock, t.cfg.FinishTimeout)
	err := t.cfg.Store.FinishAttempt(writeCtx, p)
	cancel()
	switch {
	case err == nil:
	case errors.Is(err, core.ErrFenced):
		t.cfg.Metrics.FencedWrite()
		res.err = fmt.Errorf("engine: finish attempt %d of %q: %w", a.Number, in.IntentID, err)
		return res
	case errors.Is(err, core.ErrIntentNotRunnable):
		t.log.Warn("attempt_not_runnable", "intent_id", in.IntentID, "attempt", a.Number, "error", err.Error())
		return res
	default:
		res.err = fmt.Errorf("engine: finish attempt %d of %q: %w", a.Number, in.IntentID, err)
		return res
	}
	if d.PossiblyAccepted && !in.PossiblyAccepted {
		t.cfg.Metrics.IntentPossiblyAccepted(in.SubmissionTarget)
		t.log.Warn("intent_possibly_accepted", "intent_id", in.IntentID, "attempt", a.Number)
	}
	label := resultLabel(r)
	if how == called && !calledAt.IsZero() {
		t.cfg.Metrics.AttemptFinished(in.Contract.GatewayType, label, finishedAt.Sub(calledAt))
	}
	if t.debug {
		t.log.Debug("attempt_finished", "intent_id", in.IntentID, "attempt", a.Number, "result", label,
			"status", d.Status, "error", p.Error, "next_due_at", d.NextDueAt)
	}
	if d.Status.Terminal() {
		t.cfg.Metrics.IntentCompleted(in.SubmissionTarget, d.Status, completionReason(d))
		return res
	}
	res.next = &core.ScheduleEntry{IntentID: in.IntentID, DueAt: d.NextDueAt, Mode: in.Contract.Mode}
	if how.sent() && core.Tries(a.Number, in.Attempts) == a.Number && r.Outcome != nil && !slices.ContainsFunc(in.Attempts, core.InDoubt) {
		// The cache keeps no attempts, so it may only hold intents whose
		// attempt count is also their number of tries, and none with an
		// attempt in doubt, this one included (the possiblyAccepted rule
		// reads those).
		after := in
		after.AttemptCount, after.NextDueAt, after.Attempts = a.Number, d.NextDueAt, nil
		res.known = &after
	}
	return res
}

// resultLabel names an attempt's result for metrics: the gateway's status,
// or "error" for anything that was not a well-formed outcome.
func resultLabel(r core.AttemptResult) string {
	if r.Err != nil || r.Outcome == nil {
		return "error"
	}
	return string(r.Outcome.Status)
}

// completionReason is the final outcome's reason or the exhausted reason.
func completionReason(d core.Decision) string {
	if d.Status == core.StatusExhausted {
		return string(d.ExhaustedReason)
	}
	if d.FinalOutcome != nil {
		return d.FinalOutcome.Reason
	}
	return ""
}

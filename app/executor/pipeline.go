package executor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/submissionmanager/submission-manager/app/protection"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The attempt pipeline. A worker takes one due intent through its stages in
// this order, and no stage calls back into an earlier one:
//
//	load     the intent's state: the known-intent cache, or the store
//	admit    the gates' verdict (admit.go); a deferred or held attempt ends here
//	reserve  the fenced StartAttempt, durable before any call
//	call     the call slot, the last checks, the gateway call
//	decide   the contract's policy, or the decision given for a call never made
//	record   the fenced FinishAttempt, then metrics and the scheduler's next step (record.go)
//
// An attempt a previous leader left open takes the in-doubt path instead of
// admit, reserve and call (indoubt.go). Every fenced write's error is read
// in one place, written (record.go).

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

// ended is what the call stage hands to decide and record: the attempt's
// result and how far it got.
type ended struct {
	result core.AttemptResult
	reach  reach
	// calledAt, for an attempt this leader called, is when the call began:
	// the latency sample runs from there, not from the reservation, which
	// may precede the call by the wait for a slot.
	calledAt time.Time
	// given, when set, is the decision for an attempt that never reached
	// the gateway and is not judged by the policy: it was no try.
	given *core.Decision
	// notLeader says the leadership check between the reservation and the
	// call failed: the attempt is recorded, and the term then steps down.
	notLeader bool
}

// attempt runs in a worker goroutine and takes one due intent through the
// pipeline. A state taken from the known-intent cache needs no read,
// because the fenced writes succeed only if the stored attempt count still
// matches; when one finds it stale, the intent is read afresh and judged
// again, once.
//
// s is the attempt's way to its call slot (slots.go): every gateway call,
// an in-doubt lookup included, waits for one and gives it back as soon as
// the gateway answered.
func (t *term) attempt(ctx context.Context, entry core.ScheduleEntry, cached *core.Intent, s *slot) result {
	res, stale := t.pass(ctx, entry, cached, s)
	if stale {
		// With the gateway protection on, the gates judge this second pass
		// in the worker, out of dispatch order: a rare case, an intent
		// changed behind the leader's back.
		res, _ = t.pass(ctx, entry, nil, s)
	}
	return res
}

// pass is one pass through the pipeline with one reading of the intent.
// stale reports that a fenced write found the cached state out of date.
func (t *term) pass(ctx context.Context, entry core.ScheduleEntry, cached *core.Intent, s *slot) (result, bool) {
	in, res, ok := t.load(ctx, entry, cached)
	if !ok {
		return res, false
	}
	if last, ok := in.LastAttempt(); ok && !last.Finished() {
		return t.settleInDoubt(ctx, in, last, s), false
	}
	fromCache := cached != nil
	vd, res, admitted, stale := t.admit(ctx, in, fromCache, s)
	if !admitted {
		return res, stale
	}
	reported := false
	defer func() {
		if vd != nil && !reported {
			t.gates.Report(in.Contract, *vd, false, core.AttemptResult{}, t.cfg.Clock.Now())
		}
	}()
	a, res, ok, stale := t.reserve(ctx, in, fromCache)
	if !ok {
		return t.roomFreed(res, vd, in), stale
	}
	e := t.call(ctx, in, a, vd, &reported, s)
	finishedAt := t.cfg.Clock.Now()
	res = t.record(ctx, in, a, e, t.decide(in, a, e, finishedAt), finishedAt)
	if e.notLeader && res.err == nil {
		res.err, res.next, res.known = errNotLeader("between the attempt's reservation and the gateway call"), nil, nil
	}
	return t.roomFreed(res, vd, in), false
}

// load returns the intent's state: the cached one, or the store's (the
// truth; the schedule is only a cache). ok is false when the attempt ends
// here: the intent is gone, terminal, not yet due (a stale entry), or
// leadership is lost.
func (t *term) load(ctx context.Context, entry core.ScheduleEntry, cached *core.Intent) (core.Intent, result, bool) {
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
			return in, res, false
		case errors.Is(err, core.ErrIntentNotFound):
			t.log.Warn("scheduled_intent_missing", "intent_id", entry.IntentID)
			return in, res, false
		default:
			res.err = fmt.Errorf("executor: read intent %q: %w", entry.IntentID, err)
			return in, res, false
		}
		if in.Status.Terminal() {
			return in, res, false // terminal intents are append-only
		}
	}
	if in.NextDueAt.After(t.cfg.Clock.Now()) {
		// A stale entry (an old notification or row): the intent is due later.
		res.next = &core.ScheduleEntry{IntentID: in.IntentID, DueAt: in.NextDueAt, Mode: in.Contract.Mode}
		if cached != nil {
			res.known = cached
		}
		return in, res, false
	}
	if !t.stillLeader() {
		res.err = errNotLeader("before an attempt")
		return in, res, false
	}
	return in, res, true
}

// reserve records the attempt's start in the store, fenced, before any call:
// a crash during the call then leaves an open attempt for the next leader
// to close instead of a silent resend. The attempt's StartedAt is its
// reservation's time. The write goes with the other workers' of the moment
// (writes.go).
func (t *term) reserve(ctx context.Context, in core.Intent, fromCache bool) (a core.Attempt, res result, ok, stale bool) {
	if t.slots.stopped() {
		return a, result{intentID: in.IntentID}, false, false // draining or lost: nothing new is reserved
	}
	a = core.Attempt{Number: in.AttemptCount + 1, StartedAt: t.cfg.Clock.Now()}
	span := t.cfg.Tracer.Start(ctx, ports.SpanReservation, ports.AttemptSubject(in, a.Number))
	err := t.writes.starts.do(ports.StartAttemptParams{
		Fence: t.fence, IntentID: in.IntentID, Number: a.Number, StartedAt: a.StartedAt,
	})
	span.End(ports.SpanEnd{Err: err})
	res, stale, ok = t.written(ctx, "start attempt", in, a.Number, err, fromCache)
	return a, res, ok, stale
}

// call waits for the reserved attempt's call slot, makes the last checks
// and calls the gateway. Reserved ahead, the call may come later than the
// reservation by the wait for a slot, so the deadline, the leadership and
// the gates are looked at again here; an attempt they stop is recorded as
// never sent. reported is set once the gates heard how the call ended.
func (t *term) call(ctx context.Context, in core.Intent, a core.Attempt, vd *protection.Verdict, reported *bool, s *slot) ended {
	if !s.await(ctx) {
		// The term stopped while the reservation waited for a call slot:
		// closed as never sent, the intent due at once for the next leader.
		return notCalled(NotCalledError, dueAtOnce(a))
	}
	defer s.release()
	now := t.cfg.Clock.Now()
	if core.DeadlinePassed(in.Contract, in.DeadlineStart(), now) {
		// Due only after the deadline (no leader ran while it passed, or it
		// passed while the reservation waited for its slot): an acceptance
		// now could not count, so the gateway is not called and the policy
		// exhausts the intent.
		return ended{result: core.AttemptResult{Err: errors.New(DeadlinePassedError)}, reach: notSent}
	}
	if !t.stillLeader() {
		// Paused or slow between the reservation and the call: the lease may
		// be gone, so the gateway is not called. The attempt is closed (still
		// through the fence) as never sent, and the intent stays due at once
		// for the next leader: an attempt that never reached the gateway is
		// no reason to retry later or to exhaust.
		e := notCalled(NotSubmittedError, dueAtOnce(a))
		e.notLeader = true
		return e
	}
	if vd != nil {
		if re := t.gates.Recheck(in.Contract, *vd, now); re.Kind == protection.Defer {
			// The gateway was paused or its breaker opened while the
			// attempt waited for its slot: not called, and no try.
			return notCalled("not submitted: "+re.Reason+" before the gateway call", t.deferral(in, re.Until))
		}
	}
	if a.Number == 1 {
		t.cfg.Metrics.FirstAttemptLateness(now.Sub(in.DeadlineStart()))
	}
	if t.debug {
		t.log.Debug("attempt_started", "intent_id", in.IntentID, "attempt", a.Number,
			"gateway_type", in.Contract.GatewayType, "gateway_url", in.Contract.GatewayURL)
	}
	e := ended{reach: called, calledAt: t.cfg.Clock.Now()}
	span := t.cfg.Tracer.Start(ctx, ports.SpanGatewayCall, ports.AttemptSubject(in, a.Number))
	e.result = t.submit(ctx, in, span.TraceParent())
	span.End(ports.SpanEnd{Outcome: e.result.Outcome, Err: e.result.Err})
	if vd != nil {
		// Reported at once, so the breaker sees a failure before the write
		// that records it. A call cut short by the executor stopping says
		// nothing about the gateway.
		*reported = true
		t.gates.Report(in.Contract, *vd, ctx.Err() == nil, e.result, t.cfg.Clock.Now())
	}
	if until, busy := t.busyUntil(in, e.result); busy {
		// The gateway took nothing and asked for time (429 or 503 with
		// Retry-After): no try was spent, and the intent waits as asked, as
		// a deferral, with every other call to that gateway.
		e.reach, e.given = notSent, ptrTo(t.deferral(in, until))
		return e
	}
	if errors.Is(e.result.Err, ports.ErrAnswerLost) {
		// Asked with the slot still held, as a lookup after a crash is: it
		// is a call to the same gateway.
		e.result = t.settleLostAnswer(ctx, in, a, e.result)
	}
	return e
}

// busyUntil says whether the gateway answered r busy, and until when the
// gateway protection (which heard the answer) holds it: only with the
// protection on is the wait honoured; without it the answer is an error
// like any other.
func (t *term) busyUntil(in core.Intent, r core.AttemptResult) (time.Time, bool) {
	if _, busy := ports.RetryAfter(r.Err); !busy || !t.gates.Active() {
		return time.Time{}, false
	}
	now := t.cfg.Clock.Now()
	if until, ok := t.gates.BusyUntil(in.Contract.GatewayURL, now); ok {
		return until, true
	}
	return now, true // it asked for no wait: due again at once
}

// ptrTo returns a pointer to a copy of v.
func ptrTo[T any](v T) *T { return &v }

// notCalled is the end of a reserved attempt that never reached the
// gateway, with the decision it gets instead of the policy's.
func notCalled(why string, d core.Decision) ended {
	return ended{result: core.AttemptResult{Err: errors.New(why)}, reach: notSent, given: &d}
}

// dueAtOnce is the decision for an attempt that never reached the gateway
// because this leader stopped: the intent stays pending, due at once for the
// next leader, with no retry delay.
func dueAtOnce(a core.Attempt) core.Decision {
	return core.Decision{Status: core.StatusPending, NextDueAt: a.StartedAt}
}

// submit calls the gateway named by the intent's contract snapshot, never by
// the registry, under traceParent (the gateway call span's trace context).
// The outcome is trusted as given: the gateway adapter built it with
// core.NewOutcome and returned an error for any invalid answer.
func (t *term) submit(ctx context.Context, in core.Intent, traceParent string) core.AttemptResult {
	gw, ok := t.cfg.Gateways[in.Contract.GatewayType]
	if !ok {
		return core.AttemptResult{Err: fmt.Errorf("no gateway configured for gateway type %q", in.Contract.GatewayType)}
	}
	o, err := gw.Submit(ctx, ports.SubmitParams{
		GatewayType: in.Contract.GatewayType,
		GatewayURL:  in.Contract.GatewayURL,
		Reference:   in.IntentID,
		Payload:     in.Payload,
		TraceParent: traceParent,
	})
	if err != nil {
		return core.AttemptResult{Err: err}
	}
	return core.AttemptResult{Outcome: &o}
}

// decide applies the contract's policy to the attempt's result, unless the
// attempt was given its decision. The policy counts tries, not attempts: an
// attempt that was not sent neither counts nor grows the retry delay.
func (t *term) decide(in core.Intent, a core.Attempt, e ended, finishedAt time.Time) core.Decision {
	if e.given != nil {
		return *e.given
	}
	tries := core.Tries(a.Number-1, in.Attempts)
	var delay time.Duration
	if e.reach.sent() {
		tries++
		delay = t.cfg.Protection.RetryPolicy(in.Contract, t.cfg.Retry).Delay(tries)
	}
	d := core.Decide(in.Contract, in.DeadlineStart(), tries, finishedAt, e.result, delay)
	d.PossiblyAccepted = core.PossiblyAccepted(in.Attempts, e.result)
	return d
}

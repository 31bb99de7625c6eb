package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/submissionmanager/submission-manager/app/clockctx"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// ticket follows one admitted attempt from the gate to its gateway call.
type ticket struct {
	verdict verdict
	// reported is set once the gate heard how the attempt ended.
	reported bool
}

// retryFor returns the retry policy for an intent's contract.
func (t *term) retryFor(c core.Contract) core.RetryPolicy {
	if t.cfg.Protection.Retry != nil {
		return t.cfg.Protection.Retry.For(c.GatewayType, c.Mode)
	}
	return t.cfg.Retry
}

// guarded runs execute behind the gate: a deferred or waiting attempt is
// not made, an admitted one is reported to the gate however it ends.
func (t *term) guarded(ctx context.Context, in core.Intent, fromCache bool, s *slot) (result, bool) {
	if !t.gates.active() {
		return t.execute(ctx, in, fromCache, nil, s)
	}
	now := t.cfg.Clock.Now()
	var vd verdict
	if s.admitted != nil {
		// Judged by the scheduler at dispatch, in dispatch order. A stale
		// cached state sends the worker here again, to be judged afresh.
		vd, s.admitted = *s.admitted, nil
	} else {
		vd = t.gates.admit(in.IntentID, in.Contract, now)
	}
	switch vd.kind {
	case deferTo:
		return t.deferAttempt(ctx, in, vd.until, fromCache)
	case waitUntil:
		s.skip()
		return t.keep(in, vd.until), false
	case waitFree:
		s.skip()
		res := t.keep(in, now)
		res.park = in.Contract.GatewayURL
		return res, false
	}
	tk := &ticket{verdict: vd}
	res, stale := t.execute(ctx, in, fromCache, tk, s)
	if !tk.reported {
		t.gates.finish(in.Contract, vd, false, core.AttemptResult{}, t.cfg.Clock.Now())
	}
	res.released = in.Contract.GatewayURL
	return res, stale
}

// call makes the gateway call of an admitted attempt and reports its result
// to the gate at once, so the breaker sees a failure before the write that
// records it. A call cut short by the executor stopping says nothing about
// the gateway.
func (t *term) call(ctx context.Context, in core.Intent, tk *ticket) core.AttemptResult {
	r := t.submit(ctx, in)
	if tk != nil {
		tk.reported = true
		t.gates.finish(in.Contract, tk.verdict, ctx.Err() == nil, r, t.cfg.Clock.Now())
	}
	return r
}

// keep leaves an intent in the leader's schedule at due without any write.
func (t *term) keep(in core.Intent, due time.Time) result {
	res := result{intentID: in.IntentID, next: &core.ScheduleEntry{IntentID: in.IntentID, DueAt: due, Mode: in.Contract.Mode}}
	if core.Tries(in.AttemptCount, in.Attempts) == in.AttemptCount {
		k := in
		k.Attempts, k.NextDueAt = nil, due
		res.known = &k
	}
	return res
}

// deferAttempt moves a due attempt to until without making it: no attempt
// row, no try spent. The contract's policy still decides: when until is not
// strictly before the intent's deadline, the intent is exhausted with
// deadline_exceeded, as a failed attempt at this moment would have been.
func (t *term) deferAttempt(ctx context.Context, in core.Intent, until time.Time, fromCache bool) (result, bool) {
	d := t.deferral(in, until)
	t.log.Debug("attempt_deferred", "intent_id", in.IntentID, "gateway_url", in.Contract.GatewayURL,
		"status", d.Status, "next_due_at", d.NextDueAt)
	res := result{intentID: in.IntentID}
	writeCtx, cancel := clockctx.WithTimeout(context.WithoutCancel(ctx), t.cfg.Clock, t.cfg.FinishTimeout)
	err := t.cfg.Store.Reschedule(writeCtx, ports.RescheduleParams{
		Fence: t.fence, IntentID: in.IntentID, AttemptCount: in.AttemptCount, Decision: d,
	})
	cancel()
	switch {
	case err == nil:
	case errors.Is(err, core.ErrFenced):
		t.cfg.Metrics.FencedWrite()
		res.err = fmt.Errorf("engine: defer %q: %w", in.IntentID, err)
		return res, false
	case errors.Is(err, core.ErrIntentNotRunnable) && fromCache:
		return res, true
	case errors.Is(err, core.ErrIntentNotRunnable):
		t.log.Warn("attempt_not_runnable", "intent_id", in.IntentID, "error", err.Error())
		return res, false
	default:
		res.err = fmt.Errorf("engine: defer %q: %w", in.IntentID, err)
		return res, false
	}
	if d.Status.Terminal() {
		t.cfg.Metrics.IntentCompleted(in.SubmissionTarget, d.Status, string(d.ExhaustedReason))
		return res, false
	}
	return t.keep(in, until), false
}

// deferral is the decision for an attempt moved to until without being
// made: pending until then, or exhausted with deadline_exceeded when until is
// not strictly before the intent's deadline.
func (t *term) deferral(in core.Intent, until time.Time) core.Decision {
	if deadline, ok := in.Contract.Deadline(in.DeadlineStart()); ok && !until.Before(deadline) {
		return core.Decision{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedDeadlineExceeded}
	}
	return core.Decision{Status: core.StatusPending, NextDueAt: until}
}

// parking holds due attempts waiting for room at their gateway (its max in
// flight, or a half-open probe), out of the schedule so they never block
// another gateway's work at the head of it. Owned by the scheduler.
type parking map[string][]core.ScheduleEntry

// parked takes a worker's result that asks to wait for room, and reports
// whether it did. If the room came before the result did, the entry goes
// back to the schedule at once, so nothing waits for an event that passed.
func (t *term) parked(r result) bool {
	if r.park == "" || r.next == nil || t.lost != nil {
		return false
	}
	if r.known != nil {
		t.remember(*r.known)
	}
	t.parking[r.park] = append(t.parking[r.park], *r.next)
	t.unpark(r.park)
	return true
}

// unpark moves as many parked entries of a gateway back into the schedule,
// due now, as the gateway has room for.
func (t *term) unpark(url string) {
	waiting := t.parking[url]
	if url == "" || len(waiting) == 0 {
		return
	}
	n := t.gates.room(url, len(waiting))
	now := t.cfg.Clock.Now()
	for _, e := range waiting[:n] {
		if _, busy := t.inFlight[e.IntentID]; !busy {
			e.DueAt = now
			t.schedule.Upsert(e)
		}
	}
	if n == len(waiting) {
		delete(t.parking, url)
		return
	}
	t.parking[url] = waiting[n:]
}

// unparkAll retries every gateway's parked entries; the refresh calls it as
// a safety net.
func (t *term) unparkAll() {
	for url := range t.parking {
		t.unpark(url)
	}
}

// start rebuilds the schedule and reads the pauses: a new leader must not
// call a paused gateway even once.
func (t *term) start(ctx context.Context) error {
	if err := t.rebuild(ctx); err != nil {
		return err
	}
	if t.cfg.Protection.Pauses == nil {
		return nil
	}
	ps, err := t.cfg.Protection.Pauses.ListPauses(ctx)
	if err != nil {
		return fmt.Errorf("read gateway pauses: %w", err)
	}
	t.gates.setPauses(ps)
	return nil
}

// afterRefresh re-reads the pauses (another instance may have paused or
// resumed a gateway) and gives parked work its chance. A failed read keeps
// the last snapshot: the next refresh tries again.
func (t *term) afterRefresh(ctx context.Context) {
	if t.cfg.Protection.Pauses != nil {
		ps, err := t.cfg.Protection.Pauses.ListPauses(ctx)
		if err != nil {
			t.log.Warn("gateway_pauses_unread", "error", err.Error())
		} else {
			t.gates.setPauses(ps)
		}
	}
	t.unparkAll()
}

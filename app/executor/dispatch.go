package executor

import (
	"context"

	"github.com/submissionmanager/submission-manager/core"
)

// dispatch starts attempts for due intents, earliest (and realtime) first,
// while claims are free (slots.go), checking leadership before each
// dequeue. It reads ahead (prefetch.go): an intent whose state is being
// loaded waits for the load, which wakes the scheduler.
func (t *term) dispatch(workCtx context.Context) {
	now := t.cfg.Clock.Now()
	defer func() {
		if t.lost == nil && t.sinceLoad >= t.prefetchSize()/4 {
			t.prefetch(workCtx, now)
		}
	}()
	for t.claims < maxClaims(t.cfg) && len(t.inFlight) < maxWorkers(t.cfg) {
		head, ok := t.schedule.Peek()
		if !ok || head.DueAt.After(now) {
			return
		}
		if !t.ready(head.IntentID) && t.loading == nil {
			t.prefetch(workCtx, now)
		}
		if t.loading[head.IntentID] {
			return
		}
		if !t.stillLeader() {
			t.stepDown(errNotLeader("before dequeueing an attempt"), "")
			return
		}
		entry, _ := t.schedule.PopDue(now)
		t.taken(entry.IntentID)
		if _, busy := t.inFlight[entry.IntentID]; busy {
			continue // never two attempts of one intent at once
		}
		w := &worker{claimed: true, grant: make(chan struct{}, 1)}
		t.inFlight[entry.IntentID] = w
		t.slots.enqueue(w)
		t.claims++
		var cached *core.Intent
		if in, ok := t.forget(entry.IntentID); ok {
			cached = &in
		}
		s := &slot{t: t, w: w}
		if cached != nil && t.gates.Active() {
			// The gates judge the attempt here, in dispatch order: workers
			// reserving ahead run side by side, and the half-open breaker's
			// one probe, a rate token or a gateway's in-flight room must
			// still go to the earliest due attempt (admit.go).
			vd := t.gates.Admit(*cached, now)
			s.admitted = &vd
		}
		t.spawn(func() { t.done <- t.attempt(workCtx, entry, cached, s) })
	}
}

// collect applies a worker's result, taking back its claim and slot if it
// had not given them back (an attempt that made no call).
func (t *term) collect(r result) {
	if w := t.inFlight[r.intentID]; w != nil {
		t.slots.leave(w)
		t.unclaim(w)
	}
	delete(t.inFlight, r.intentID)
	if r.err != nil {
		t.stepDown(r.err, r.intentID)
		return
	}
	if t.parked(r) {
		return
	}
	defer t.unpark(r.released)
	if r.next != nil && t.lost == nil {
		t.schedule.Upsert(*r.next)
		if r.known != nil {
			t.remember(*r.known)
		}
	}
}

// spawn runs job on an idle worker of the term, or on a new one. Workers
// stay until the term ends (run closes jobs), so the stack an attempt grows
// (the gateway call, the store's write) is grown once per worker, not once
// per attempt: growing it was about 4 % of the executor's CPU. A worker
// counts as busy until it is back at the channel, so there are about as
// many workers as attempts ever ran at once (maxWorkers), at times a few
// more.
func (t *term) spawn(job func()) {
	select {
	case t.jobs <- job:
		return
	default:
	}
	t.workers.Add(1)
	go func() {
		defer t.workers.Done()
		job()
		for job := range t.jobs {
			job()
		}
	}()
}

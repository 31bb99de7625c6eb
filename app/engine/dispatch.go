package engine

import (
	"context"

	"github.com/submissionmanager/submission-manager/core"
)

// worker is the scheduler's record of one attempt's goroutine. Only the
// scheduler goroutine reads or writes it; the worker names it when it gives
// its slot back, so a late message cannot free another worker's slot.
type worker struct{ holdsSlot bool }

// maxWorkers bounds the workers of a term: MaxInFlight calling, as many
// again recording their results. When writes fall behind, dispatch waits
// for them instead of piling up results in memory.
func maxWorkers(cfg Config) int { return 2 * cfg.MaxInFlight }

// dispatch starts attempts for due intents, earliest (and realtime) first,
// while fewer than MaxInFlight are running, checking leadership before each
// dequeue. It reads ahead (prefetch.go): an intent whose state is being
// loaded waits for the load, which wakes the scheduler.
func (t *term) dispatch(workCtx context.Context) {
	now := t.cfg.Clock.Now()
	defer func() {
		if t.lost == nil && t.sinceLoad >= t.prefetchSize()/4 {
			t.prefetch(workCtx, now)
		}
	}()
	for t.calls < t.cfg.MaxInFlight && len(t.inFlight) < maxWorkers(t.cfg) {
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
			t.lose(errNotLeader("before dequeueing an attempt"), "")
			return
		}
		entry, _ := t.schedule.PopDue(now)
		t.taken(entry.IntentID)
		if _, busy := t.inFlight[entry.IntentID]; busy {
			continue // never two attempts of one intent at once
		}
		w := &worker{holdsSlot: true}
		t.inFlight[entry.IntentID] = w
		t.calls++
		var cached *core.Intent
		if in, ok := t.forget(entry.IntentID); ok {
			cached = &in
		}
		t.workers.Add(1)
		go func() {
			defer t.workers.Done()
			var once bool
			release := func() {
				if !once {
					once = true
					t.released <- w
				}
			}
			t.done <- t.attempt(workCtx, entry, cached, release)
		}()
	}
}

// release takes back a worker's gateway slot, once.
func (t *term) release(w *worker) {
	if w != nil && w.holdsSlot {
		w.holdsSlot = false
		t.calls--
	}
}

// complete applies a worker's result, taking back its slot if it had not
// given it back (an attempt that made no call).
func (t *term) complete(r result) {
	t.release(t.inFlight[r.intentID])
	delete(t.inFlight, r.intentID)
	if r.err != nil {
		t.lose(r.err, r.intentID)
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

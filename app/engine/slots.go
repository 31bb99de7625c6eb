package engine

import "context"

// An attempt passes two bounds on its way to the gateway. Its claim, taken
// when the scheduler dispatches it, lets it read its intent and reserve its
// attempt in the store; a call slot, granted once the reservation is
// durable, lets it call the gateway. Claims are bounded by MaxInFlight +
// ReserveAhead, call slots by MaxInFlight. So while MaxInFlight calls are
// under way, up to ReserveAhead of the next due attempts are already being
// made durable, and a freed slot goes at once to an attempt whose
// reservation is on disk instead of waiting for the next commit: the
// reservation's fsync leaves the slot's cycle. Slots are granted in
// dispatch order, which is the schedule's (earliest, then realtime), so
// reserving ahead does not reorder the calls.

// worker is the scheduler's record of one attempt's goroutine. Only the
// scheduler goroutine reads or writes its fields (grant excepted, a channel);
// the worker names it in its messages, so a late message cannot free another
// worker's claim or slot.
type worker struct {
	// claimed: the worker holds a claim (until its call ended or its
	// result arrived).
	claimed bool
	// reserved: its attempt is reserved and it waits for a call slot.
	reserved bool
	// holdsSlot: it was granted a call slot and has not given it back.
	holdsSlot bool
	// gone: its result arrived; it waits for nothing any more.
	gone bool
	// grant receives the call slot (capacity 1: the scheduler never blocks).
	grant chan struct{}
}

// maxClaims bounds the attempts between their dispatch and the end of their
// gateway call: calling, or reserved (or reserving) ahead of a free slot.
func maxClaims(cfg Config) int { return cfg.MaxInFlight + cfg.ReserveAhead }

// maxWorkers bounds the workers of a term: every claim, and as many again
// as MaxInFlight recording their results. When writes fall behind, dispatch
// waits for them instead of piling up results in memory.
func maxWorkers(cfg Config) int { return maxClaims(cfg) + cfg.MaxInFlight }

// slot is a worker's side of the hand-off: await asks for a call slot once
// the attempt is reserved, release gives it back once the gateway answered.
type slot struct {
	t        *term
	w        *worker
	released bool
}

// await announces a reserved attempt and waits for its call slot. It
// reports false when the term stops first (the executor is draining or lost
// its lease): the attempt must then not be made.
func (s *slot) await(ctx context.Context) bool {
	s.t.reserved <- s.w
	select {
	case <-s.w.grant:
		return true
	case <-ctx.Done():
		return false
	case <-s.t.halt:
		return false
	}
}

// release gives the call slot (and the claim) back, once: recording the
// result needs neither, so the next reserved attempt's call need not wait
// for this one's write.
func (s *slot) release() {
	if !s.released {
		s.released = true
		s.t.released <- s.w
	}
}

// noteReserved marks a worker's attempt reserved and grants what it can.
func (t *term) noteReserved(w *worker) {
	w.reserved = true
	t.grant()
}

// grant hands free call slots to reserved workers in dispatch order. A
// worker still reserving at the head of the queue holds back those behind
// it, so calls keep the schedule's order; workers whose result arrived
// without a call leave the queue.
func (t *term) grant() {
	for t.calls < t.cfg.MaxInFlight && len(t.queue) > 0 {
		w := t.queue[0]
		if !w.gone && (!w.reserved || t.halted) {
			return
		}
		t.queue[0] = nil
		t.queue = t.queue[1:]
		if w.gone {
			continue
		}
		w.holdsSlot = true
		t.calls++
		w.grant <- struct{}{}
	}
}

// release takes back a worker's call slot and claim, once.
func (t *term) release(w *worker) {
	if w == nil {
		return
	}
	if w.holdsSlot {
		w.holdsSlot = false
		t.calls--
	}
	if w.claimed {
		w.claimed = false
		t.claims--
	}
	t.grant()
}

// haltWaiting tells every worker waiting for a call slot to give up: the
// term is draining or lost. Reserved attempts not yet called are closed as
// never sent by their workers.
func (t *term) haltWaiting() {
	if !t.halted {
		t.halted = true
		close(t.halt)
	}
}

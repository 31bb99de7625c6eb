package executor

import (
	"context"
	"runtime"
	"sync"

	"github.com/submissionmanager/submission-manager/app/protection"
)

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

// worker is the scheduler's record of one attempt's goroutine. claimed is
// the scheduler's alone; the other fields belong to the term's slots and
// are guarded by its mutex. The worker names its record in its messages, so
// a late message cannot free another worker's claim or slot.
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
	// grant receives the call slot (capacity 1: granting never blocks).
	grant chan struct{}
}

// maxClaims bounds the attempts between their dispatch and the end of their
// gateway call: calling, or reserved (or reserving) ahead of a free slot.
func maxClaims(cfg Config) int { return cfg.MaxInFlight + cfg.ReserveAhead }

// maxWorkers bounds the workers of a term: every claim, and as many again
// as MaxInFlight recording their results. When writes fall behind, dispatch
// waits for them instead of piling up results in memory.
func maxWorkers(cfg Config) int { return maxClaims(cfg) + cfg.MaxInFlight }

// slots hands out a term's call slots. A worker that gives its slot back
// hands it straight to the next reserved worker, under the mutex, without
// a trip through the scheduler goroutine: that trip would sit in every
// call's cycle.
type slots struct {
	mu    sync.Mutex
	max   int
	calls int
	// queue holds the dispatched workers without a slot, in dispatch order.
	queue []*worker
	// halt is closed by stop: workers still waiting give up, and no slot
	// is granted any more.
	halt chan struct{}
}

func newSlots(max int) *slots { return &slots{max: max, halt: make(chan struct{})} }

// enqueue takes a dispatched worker into the queue.
func (s *slots) enqueue(w *worker) {
	s.mu.Lock()
	s.queue = append(s.queue, w)
	s.mu.Unlock()
}

// await marks the worker's attempt reserved and waits for its call slot.
// It reports false when the term stops first (the executor is draining or
// lost its lease): the attempt must then not be made.
func (s *slots) await(ctx context.Context, w *worker) bool {
	s.mu.Lock()
	w.reserved = true
	s.grantLocked()
	s.mu.Unlock()
	select {
	case <-w.grant:
		return true
	case <-ctx.Done():
		return false
	case <-s.halt:
		return false
	}
}

// release gives the worker's slot back, to the next reserved worker.
func (s *slots) release(w *worker) {
	s.mu.Lock()
	s.releaseLocked(w)
	s.mu.Unlock()
}

// leave takes a worker whose result arrived out of the queue, with its slot
// if it still held one (an attempt that made no call, or gave up waiting
// after its grant was sent).
func (s *slots) leave(w *worker) {
	s.mu.Lock()
	w.gone = true
	s.releaseLocked(w)
	s.mu.Unlock()
}

// releaseLocked takes back the worker's slot, if it holds one, and grants
// what is free. The caller holds mu.
func (s *slots) releaseLocked(w *worker) {
	if w.holdsSlot {
		w.holdsSlot = false
		s.calls--
	}
	s.grantLocked()
}

// stopped reports whether stop was called: nothing new is reserved then.
// It reads the halt channel, so every attempt's check takes no lock.
func (s *slots) stopped() bool {
	select {
	case <-s.halt:
		return true
	default:
		return false
	}
}

// stop tells every worker waiting for a call slot to give up, once: the
// term is draining or lost. Reserved attempts not yet called are closed as
// never sent by their workers.
func (s *slots) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stopped() {
		close(s.halt)
	}
}

// grantLocked hands free slots to reserved workers in dispatch order. A
// worker still reserving at the head of the queue holds back those behind
// it, so calls keep the schedule's order; workers whose result arrived
// without a call leave the queue. The caller holds mu.
func (s *slots) grantLocked() {
	for s.calls < s.max && len(s.queue) > 0 && !s.stopped() {
		w := s.queue[0]
		if !w.gone && !w.reserved {
			return
		}
		s.queue[0] = nil
		s.queue = s.queue[1:]
		if w.gone {
			continue
		}
		w.holdsSlot = true
		s.calls++
		w.grant <- struct{}{}
	}
}

// slot is a worker's side of the hand-off.
type slot struct {
	t        *term
	w        *worker
	released bool
	// admitted, with the gateway protection on, is the gates' verdict the
	// scheduler took for the attempt at its dispatch (dispatch.go).
	admitted *protection.Verdict
}

// await waits for the attempt's call slot once its reservation is durable
// (slots.await).
func (s *slot) await(ctx context.Context) bool { return s.t.slots.await(ctx, s.w) }

// release gives the call slot back once, as soon as the gateway answered,
// and tells the scheduler its claim is free: recording the result needs
// neither, so the next reserved attempt's call need not wait for this
// one's write.
//
// It then yields, so that the worker just granted the slot runs at once:
// the grant put it next in line on this thread, but this worker's result
// write wakes the store's writer, which would take that place and push it
// behind every runnable goroutine. In 20,000-intent drains that wait was
// 0.2-0.4 ms of each 6 ms slot cycle; with the yield it is under 10 us.
// The scheduler is told first for the same reason: telling it second would
// push the granted worker back as the write would.
func (s *slot) release() {
	if !s.released {
		s.released = true
		s.t.released <- s.w
		s.t.slots.release(s.w)
		runtime.Gosched()
	}
}

// skip takes a worker that will make no call out of the line at once (the
// gates made it wait), so the reserved workers behind it need not wait for
// its result to reach the scheduler.
func (s *slot) skip() { s.t.slots.leave(s.w) }

// unclaim takes back a worker's claim, once.
func (t *term) unclaim(w *worker) {
	if w != nil && w.claimed {
		w.claimed = false
		t.claims--
	}
}

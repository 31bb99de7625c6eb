package gatewaysim

import (
	"container/heap"
	"sync"
	"time"
)

// A waker ends the simulated latencies on time. A Go timer wakes an idle
// process late: the runtime sleeps until its next timer in epoll_wait,
// whose timeout has millisecond resolution, so on Linux a 5 ms latency took
// 5.4 ms on average with 64 submissions waiting at once, and a benchmark
// of the gateway's callers measured that lateness along with them. The
// waker keeps the waiting submissions in one deadline heap and arms a
// single kernel timer for the earliest (waker_linux.go: a timerfd in the
// runtime's poller, which wakes at the timer's own resolution: 5.05 ms in
// the same test, for the same CPU). Elsewhere, or without a timerfd, that
// one timer is a Go timer, as precise as before.
type waker struct {
	mu  sync.Mutex
	due dueHeap
	// armed is the deadline the kernel timer is set for, zero when it is
	// not set or has fired.
	armed time.Time
	clock kernelTimer
	// closed is set by close, under mu, before the kernel timer closes:
	// nothing arms it after that (a timerfd's number may be reused).
	closed bool
	// stopped is closed when run returned.
	stopped chan struct{}
}

// kernelTimer is the platform's one-shot timer: arm sets it to fire after
// d (replacing any earlier setting), wait blocks until it fired and
// reports false once close was called.
type kernelTimer interface {
	arm(d time.Duration)
	wait() bool
	close()
}

// A wake is one waiting submission: ch is closed at its deadline.
type wake struct {
	at    time.Time
	ch    chan struct{}
	index int // in the heap, -1 once fired or cancelled
}

// newWaker starts a waker on the platform's kernel timer (newKernelTimer)
// or the given one. Its goroutine runs until close.
func newWaker(clock kernelTimer) *waker {
	w := &waker{clock: clock, stopped: make(chan struct{})}
	go func() {
		defer close(w.stopped)
		w.run()
	}()
	return w
}

// close stops the waker once no submission waits any more.
func (w *waker) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.clock.close()
	<-w.stopped
}

// after returns a channel closed once d has passed, and a cancel that
// forgets it (for a submission that ends early; safe after the wake).
func (w *waker) after(d time.Duration) (<-chan struct{}, func()) {
	e := &wake{at: time.Now().Add(d), ch: make(chan struct{})}
	w.mu.Lock()
	heap.Push(&w.due, e)
	if e.index == 0 && (w.armed.IsZero() || e.at.Before(w.armed)) {
		w.armLocked(e.at)
	}
	w.mu.Unlock()
	return e.ch, func() {
		w.mu.Lock()
		if e.index >= 0 {
			heap.Remove(&w.due, e.index)
		}
		w.mu.Unlock()
	}
}

// run closes the channels of the wakes that are due each time the kernel
// timer fires, and arms it for the next, until close.
func (w *waker) run() {
	for w.clock.wait() {
		now := time.Now()
		w.mu.Lock()
		w.armed = time.Time{}
		for len(w.due) > 0 && !w.due[0].at.After(now) {
			close(heap.Pop(&w.due).(*wake).ch)
		}
		if len(w.due) > 0 {
			w.armLocked(w.due[0].at)
		}
		w.mu.Unlock()
	}
}

// armLocked sets the kernel timer for at, unless the waker is closed. The
// caller holds mu.
func (w *waker) armLocked(at time.Time) {
	if w.closed {
		return
	}
	w.armed = at
	w.clock.arm(time.Until(at))
}

// dueHeap orders the waiting submissions by deadline (container/heap).
type dueHeap []*wake

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *dueHeap) Push(x any) {
	e := x.(*wake)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *dueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.index = -1
	return e
}

// goTimer is the kernel timer where there is no timerfd.
type goTimer struct {
	t    *time.Timer
	stop chan struct{}
}

func newGoTimer() *goTimer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &goTimer{t: t, stop: make(chan struct{})}
}

func (g *goTimer) arm(d time.Duration) { g.t.Reset(d) }

func (g *goTimer) wait() bool {
	select {
	case <-g.t.C:
		return true
	case <-g.stop:
		return false
	}
}

func (g *goTimer) close() { close(g.stop) }

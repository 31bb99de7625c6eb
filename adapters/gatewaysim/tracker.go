package gatewaysim

import (
	"net/http"
	"sync"
)

// handlerTracker counts running handlers so that Close can wait for them.
// http.Server.Close cuts connections but does not wait for handlers, and a
// sync.WaitGroup may not be added to while it is being waited on, which a
// request read just before the cut would do; the tracker refuses late
// handlers instead.
type handlerTracker struct {
	mu     sync.Mutex
	idle   *sync.Cond
	active int
	closed bool
}

func newHandlerTracker() *handlerTracker {
	t := &handlerTracker{}
	t.idle = sync.NewCond(&t.mu)
	return t
}

// wrap runs h as a tracked handler; after closeAndWait it aborts requests.
func (t *handlerTracker) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !t.enter() {
			abort()
		}
		defer t.leave()
		h.ServeHTTP(w, r)
	})
}

func (t *handlerTracker) enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.active++
	return true
}

func (t *handlerTracker) leave() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.active--
	if t.active == 0 {
		t.idle.Broadcast()
	}
}

// closeAndWait refuses new handlers and waits for the running ones.
func (t *handlerTracker) closeAndWait() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for t.active > 0 {
		t.idle.Wait()
	}
}

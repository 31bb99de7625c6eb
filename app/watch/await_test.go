package watch

import (
	"context"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// awaitResult is what one AwaitFinal call answered.
type awaitResult struct {
	in     core.Intent
	waited bool
	err    error
}

// awaitInBackground calls AwaitFinal for the intent as first read, and
// returns once its wait's timer is armed (it registered and read again).
func (h *harness) awaitInBackground(in core.Intent, d time.Duration) <-chan awaitResult {
	h.t.Helper()
	out := make(chan awaitResult, 1)
	ctx, cancel := context.WithTimeout(h.t.Context(), 10*time.Second)
	h.t.Cleanup(cancel)
	go func() {
		got, waited, err := h.w.AwaitFinal(ctx, in, d)
		out <- awaitResult{got, waited, err}
	}()
	if err := h.clock.WaitForTimer(h.t.Context(), h.clock.Now().Add(d)); err != nil {
		h.t.Fatalf("AwaitFinal armed no wait of %s: %v", d, err)
	}
	return out
}

// bounded is the test's context with a deadline on the wall clock, so that
// an AwaitFinal that waits when it should not fails the test instead of
// hanging it (its waits run on the fake clock, which only the test moves).
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (h *harness) read(id string) core.Intent {
	h.t.Helper()
	in, err := h.store.GetIntent(h.t.Context(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return in
}

func TestAwaitFinalAnswersATerminalIntentAtOnce(t *testing.T) {
	h := newHarness(t, 0)
	h.create("done")
	h.finish("done", core.Decision{Status: core.StatusAccepted})
	got, waited, err := h.w.AwaitFinal(bounded(t), h.read("done"), time.Hour)
	if err != nil || !waited || got.Status != core.StatusAccepted {
		t.Fatalf("AwaitFinal = %s waited=%v err=%v, want accepted at once", got.Status, waited, err)
	}
	if n := h.w.Waiters(); n != 0 {
		t.Errorf("%d waiters left registered", n)
	}
}

// A change committed after the request's first read and before it
// registered is found by the read after registering, without a wait.
func TestAwaitFinalReadsAgainAfterRegistering(t *testing.T) {
	h := newHarness(t, 0)
	h.create("x")
	first := h.read("x")
	h.finish("x", core.Decision{Status: core.StatusAccepted})
	got, waited, err := h.w.AwaitFinal(bounded(t), first, time.Hour)
	if err != nil || !waited || got.Status != core.StatusAccepted {
		t.Fatalf("AwaitFinal = %s waited=%v err=%v, want the accepted state read after registering", got.Status, waited, err)
	}
}

func TestAwaitFinalAnswersWhenTheWatcherSeesTheIntentFinal(t *testing.T) {
	h := newHarness(t, 0)
	h.create("x")
	res := h.awaitInBackground(h.read("x"), time.Hour)
	h.finish("x", core.Decision{Status: core.StatusAccepted})
	h.tick()
	r := <-res
	if r.err != nil || !r.waited || r.in.Status != core.StatusAccepted {
		t.Fatalf("AwaitFinal = %s waited=%v err=%v, want accepted", r.in.Status, r.waited, r.err)
	}
}

func TestAwaitFinalAnswersTheIntentAsItStandsWhenTheWaitRunsOut(t *testing.T) {
	h := newHarness(t, 0)
	h.create("x")
	res := h.awaitInBackground(h.read("x"), 5*time.Second)
	h.clock.Advance(5 * time.Second)
	r := <-res
	if r.err != nil || !r.waited || r.in.Status != core.StatusPending {
		t.Fatalf("AwaitFinal = %s waited=%v err=%v, want pending after waiting", r.in.Status, r.waited, r.err)
	}
}

func TestAwaitFinalOverTheCapAnswersAtOnceWithoutWaiting(t *testing.T) {
	h := newHarness(t, 1)
	h.create("x")
	h.register("y")
	first := h.read("x")
	got, waited, err := h.w.AwaitFinal(bounded(t), first, time.Hour)
	if err != nil || waited || got.IntentID != "x" || got.Status != core.StatusPending {
		t.Fatalf("AwaitFinal over the cap = %+v waited=%v err=%v, want the intent as read, not waited", got, waited, err)
	}
}

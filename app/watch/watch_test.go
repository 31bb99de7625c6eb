package watch

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)

var contract = core.Contract{
	SubmissionTarget: "sms.realtime", GatewayType: core.GatewaySMS, GatewayURL: "http://gw", Mode: core.ModeRealtime,
	Policy: core.PolicyMaxAttempts, MaxAttempts: 3, TerminalOutcomes: []string{core.ReasonInvalidRequest},
}

type harness struct {
	t     testing.TB
	clock *clocktest.Clock
	store *memstore.Store
	w     *Watcher
	fence core.Fence
}

// newHarness starts a watcher on a memstore with a fake clock and waits
// until it follows the store; the test's end stops it and waits for Run.
func newHarness(t testing.TB, maxWaiters int) *harness {
	t.Helper()
	h := &harness{t: t, clock: clocktest.New(t0)}
	h.store = memstore.New(h.clock)
	w, err := New(Config{Store: h.store, Reader: h.store, Clock: h.clock, MaxWaiters: maxWaiters})
	if err != nil {
		t.Fatal(err)
	}
	h.w = w
	lease, ok, err := h.store.Acquire(t.Context(), ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "leader", Duration: time.Hour})
	if err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	h.fence = lease.Fence()
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := w.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	h.polled()
	return h
}

// polled waits until the watcher finished a poll and armed its next one.
func (h *harness) polled() {
	h.t.Helper()
	if err := h.clock.WaitForTimer(h.t.Context(), h.clock.Now().Add(DefaultInterval)); err != nil {
		h.t.Fatal(err)
	}
}

// tick advances the clock to the next poll and waits until it is done.
func (h *harness) tick() {
	h.t.Helper()
	h.clock.Advance(DefaultInterval)
	h.polled()
}

func (h *harness) create(id string) {
	h.t.Helper()
	h.clock.Advance(time.Millisecond)
	if _, err := h.store.CreateIntent(h.t.Context(), core.NewIntent(id, contract, []byte(`{}`), h.clock.Now())); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) finish(id string, d core.Decision) {
	h.t.Helper()
	h.clock.Advance(time.Millisecond)
	ctx := h.t.Context()
	if err := h.store.StartAttempt(ctx, ports.StartAttemptParams{Fence: h.fence, IntentID: id, Number: 1, StartedAt: h.clock.Now()}); err != nil {
		h.t.Fatal(err)
	}
	o := &core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonProviderFailure}
	if d.Status == core.StatusAccepted {
		o = &core.Outcome{Status: core.OutcomeAccepted}
		d.FinalOutcome = o
	}
	if err := h.store.FinishAttempt(ctx, ports.FinishAttemptParams{
		Fence: h.fence, IntentID: id, Number: 1, FinishedAt: h.clock.Now(), Outcome: o, Decision: d, Sent: true,
	}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) register(id string) *Waiter {
	h.t.Helper()
	wt, ok := h.w.register(id)
	if !ok {
		h.t.Fatalf("Register(%s) refused", id)
	}
	h.t.Cleanup(wt.Done)
	return wt
}

func woken(wt *Waiter) bool {
	select {
	case <-wt.woken:
		return true
	default:
		return false
	}
}

func TestWatcherWakesTheWaitersOfAnIntentThatBecameTerminal(t *testing.T) {
	h := newHarness(t, 0)
	h.create("done")
	h.create("retried")
	h.create("other")
	done1, done2 := h.register("done"), h.register("done")
	retried, other := h.register("retried"), h.register("other")

	h.finish("done", core.Decision{Status: core.StatusAccepted})
	h.finish("retried", core.Decision{Status: core.StatusPending, NextDueAt: h.clock.Now().Add(time.Second)})
	h.tick()

	if !woken(done1) || !woken(done2) {
		t.Error("the waiters of an accepted intent were not woken")
	}
	if woken(retried) || woken(other) {
		t.Error("a waiter of an intent that is still pending was woken")
	}
	// Wait returns at once for a woken waiter, without the clock moving.
	done1.Wait(t.Context(), time.Hour)
}

func TestWaitEndsWhenItsTimeRunsOut(t *testing.T) {
	h := newHarness(t, 0)
	h.create("slow")
	wt := h.register("slow")
	returned := make(chan struct{})
	go func() { defer close(returned); wt.Wait(t.Context(), 5*time.Second) }()
	if err := h.clock.WaitForTimer(t.Context(), h.clock.Now().Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(5 * time.Second)
	<-returned
	if woken(wt) {
		t.Error("a waiter whose time ran out was reported woken")
	}
}

func TestWaitersAreCappedAndOverTheCapRefused(t *testing.T) {
	h := newHarness(t, 2)
	a, _ := h.register("a"), h.register("b")
	if _, ok := h.w.Register("c"); ok {
		t.Fatal("a third waiter was admitted over a cap of 2")
	}
	a.Done()
	a.Done() // idempotent: frees one place, not two
	if n := h.w.Waiters(); n != 1 {
		t.Fatalf("Waiters() = %d after one Done, want 1", n)
	}
	h.register("c")
	if _, ok := h.w.Register("d"); ok {
		t.Fatal("a waiter was admitted over the cap after Done")
	}
}

func TestCloseAnswersEveryWaiterAndRefusesNewOnes(t *testing.T) {
	h := newHarness(t, 0)
	h.create("x")
	var wg sync.WaitGroup
	for range 3 {
		wt := h.register("x")
		wg.Go(func() { wt.Wait(t.Context(), time.Hour) })
	}
	h.w.Close()
	wg.Wait() // returns only because Close released them: the clock never moved
	if _, ok := h.w.Register("x"); ok {
		t.Error("a closed watcher admitted a waiter")
	}
	h.w.Close() // safe twice
}

func TestRegisterRefusesUntilTheWatcherFollowsTheStore(t *testing.T) {
	clock := clocktest.New(t0)
	store := memstore.New(clock)
	w, err := New(Config{Store: store, Reader: store, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.Register("x"); ok {
		t.Error("Register admitted a waiter before the first read placed the cursor")
	}
	if err := w.Prime(t.Context()); err != nil {
		t.Fatal(err)
	}
	wt, ok := w.Register("x")
	if !ok {
		t.Fatal("Register refused a waiter after Prime placed the cursor, before Run")
	}
	wt.Done()
}

func TestIdleWatcherJumpsButNeverSkipsAChangeAWaiterCanMiss(t *testing.T) {
	h := newHarness(t, 0)
	// Changes with nobody waiting are skipped by a jump of the cursor.
	for _, id := range []string{"a", "b", "c"} {
		h.create(id)
		h.finish(id, core.Decision{Status: core.StatusAccepted})
	}
	h.tick()
	latest, err := h.store.LatestChange(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if h.w.cursor != latest {
		t.Fatalf("idle cursor %+v, want the latest change %+v", h.w.cursor, latest)
	}
	// A waiter registered before the change is woken by the next poll.
	h.create("d")
	wt := h.register("d")
	h.finish("d", core.Decision{Status: core.StatusAccepted})
	h.tick()
	if !woken(wt) {
		t.Error("the waiter of an intent finished after it registered was not woken")
	}
}

func TestNewRefusesAnIncompleteConfig(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New accepted a config without store and clock")
	}
	clock := clocktest.New(t0)
	if _, err := New(Config{Store: memstore.New(clock), Reader: memstore.New(clock), Clock: clock, MaxWaiters: -1}); err == nil {
		t.Error("New accepted a negative MaxWaiters")
	}
}

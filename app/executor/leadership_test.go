package executor_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

func TestLeaseTakenOverFencesStartAttemptBeforeAnyGatewayCall(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.takeOver()
	h.submit("i-1", smsDeadline, `{}`) // no reply scripted: a call fails the test

	err := h.leadResult()
	if !errors.Is(err, core.ErrFenced) {
		t.Fatalf("Lead returned %v, want core.ErrFenced", err)
	}
	if n := h.gw.CallCount(); n != 0 {
		t.Fatalf("gateway called %d times after the lease was taken over", n)
	}
	in, _ := h.mem.GetIntent(h.ctx, "i-1")
	if in.AttemptCount != 0 || in.Status != core.StatusPending {
		t.Fatalf("intent changed by a fenced leader: %+v", in)
	}
	if _, _, fenced := h.metrics.snapshot(); fenced != 1 {
		t.Fatalf("FencedWrite counted %d, want 1", fenced)
	}
}

func TestLeaseLostDuringGatewayCallsFencesResultsAndCancelsTheRest(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	holdA, holdB := make(chan struct{}), make(chan struct{}) // holdB is never closed
	h.on("a", accepted.HeldUntil(holdA))
	h.on("b", accepted.HeldUntil(holdB))
	h.submit("a", smsDeadline, `{}`)
	h.submit("b", smsDeadline, `{}`)
	h.waitCall()
	h.waitCall()

	h.takeOver()
	close(holdA) // a's result comes back after the lease moved on
	err := h.leadResult()
	if !errors.Is(err, core.ErrFenced) || !strings.Contains(err.Error(), "finish attempt") {
		t.Fatalf("Lead returned %v, want the fenced FinishAttempt", err)
	}
	// Lead returned although b's gateway never answered: b's call was
	// cancelled, and its result was refused by the fence as well.
	for _, id := range []string{"a", "b"} {
		in, _ := h.mem.GetIntent(h.ctx, id)
		if in.Status != core.StatusPending || in.AttemptCount != 1 || in.Attempts[0].Finished() {
			t.Fatalf("%s was changed by a fenced leader: %+v", id, in)
		}
	}
	if _, _, fenced := h.metrics.snapshot(); fenced != 2 {
		t.Fatalf("FencedWrite counted %d, want 2", fenced)
	}
}

func TestFailedLeadershipCheckStopsDispatch(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.leader.Store(false)
	h.submit("i-1", smsDeadline, `{}`)

	if err := h.leadResult(); !errors.Is(err, core.ErrFenced) {
		t.Fatalf("Lead returned %v, want core.ErrFenced", err)
	}
	if n := h.gw.CallCount(); n != 0 {
		t.Fatalf("gateway called %d times without leadership", n)
	}
	if in, _ := h.mem.GetIntent(h.ctx, "i-1"); in.AttemptCount != 0 {
		t.Fatalf("attempt started without leadership: %+v", in)
	}
}

func TestLeadershipLostDuringRebuildDiscardsTheSchedule(t *testing.T) {
	h := newHarness(t)
	h.submit("i-1", smsDeadline, `{}`)
	h.leader.Store(false) // the lease was lost while the schedule was rebuilt
	h.launchLead()
	if err := h.leadResult(); !errors.Is(err, core.ErrFenced) || !strings.Contains(err.Error(), "rebuild") {
		t.Fatalf("Lead returned %v, want a leadership error after the rebuild", err)
	}
	if n := h.gw.CallCount(); n != 0 {
		t.Fatalf("gateway called %d times", n)
	}
}

func TestCrashRecoveryClosesTheUnfinishedAttempt(t *testing.T) {
	h := newHarness(t)
	h.on("i-1", accepted)
	h.submit("i-1", smsMaxAttempts, `{}`)
	// A previous leader reserved attempt 1 and died during the gateway call.
	old, _, err := h.mem.Acquire(h.ctx, ports.AcquireLeaseParams{
		LeaseName: core.DefaultLeaseName, HolderID: "instance-old", Duration: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.mem.StartAttempt(h.ctx, ports.StartAttemptParams{Fence: old.Fence(), IntentID: "i-1", Number: 1, StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Minute) // its lease expires
	recovered := h.clock.Now()

	h.startLead()
	in := h.waitAttempts("i-1", 1)
	a := in.Attempts[0]
	if a.Error != executor.OutcomeUnknownError || a.Outcome != nil || !a.FinishedAt.Equal(recovered) {
		t.Fatalf("attempt 1 closed as %+v, want the unknown-outcome error at recovery time", a)
	}
	if !a.Sent {
		t.Fatalf("attempt 1 closed as outcome unknown with Sent=false: its call may have reached the gateway, so it is a try")
	}
	if in.Status != core.StatusPending || !in.NextDueAt.Equal(recovered.Add(core.DefaultRetryDelay)) {
		t.Fatalf("after recovery: %s due %v, want pending and retried after the delay", in.Status, in.NextDueAt)
	}
	if n := h.gw.CallCount(); n != 0 {
		t.Fatalf("closing the unknown attempt called the gateway %d times", n)
	}

	h.waitTimer(in.NextDueAt)
	h.clock.AdvanceTo(in.NextDueAt)
	in = h.waitStatus("i-1", core.StatusAccepted)
	if in.AttemptCount != 2 || !in.Attempts[1].StartedAt.Equal(recovered.Add(core.DefaultRetryDelay)) {
		t.Fatalf("after retry: %+v", in)
	}
}

func TestRefreshPicksUpIntentsCreatedByAnotherInstance(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.on("f-1", accepted)
	// Submitted through a follower: same store, no local executor told.
	h.submitElsewhere(h.store, "f-1", smsDeadline, `{}`)

	h.clock.Advance(h.refreshInterval())
	c := h.waitCall()
	if !c.At.Equal(t0.Add(h.refreshInterval())) {
		t.Fatalf("follower's intent attempted at %v, want at the next refresh", c.At.Sub(t0))
	}
	h.waitStatus("f-1", core.StatusAccepted)
	if err := h.stopLead(); err != nil {
		t.Fatal(err)
	}
	if got := h.metrics.firstAttemptLateness(); len(got) != 1 || got[0] != h.refreshInterval() {
		t.Fatalf("FirstAttemptLateness %v, want one refresh interval", got)
	}
}

// failingStore is the memstore with one read that can be made to fail, as a
// SQL store does when the database is unreachable.
type failingStore struct {
	ports.Store
	failChanged, failPending atomic.Bool
}

var errDatabaseDown = errors.New("database down")

func (s *failingStore) ListChanged(ctx context.Context, p ports.ListChangedParams) ([]ports.ScheduleRow, error) {
	if s.failChanged.Load() {
		return nil, errors.Join(core.ErrStoreUnavailable, errDatabaseDown)
	}
	return s.Store.ListChanged(ctx, p)
}

func (s *failingStore) ListPending(ctx context.Context, p ports.ListPendingParams) ([]ports.ScheduleRow, error) {
	if s.failPending.Load() {
		return nil, errors.Join(core.ErrStoreUnavailable, errDatabaseDown)
	}
	return s.Store.ListPending(ctx, p)
}

func newFailingHarness(t *testing.T) (*harness, *failingStore) {
	h := newHarness(t)
	fs := &failingStore{Store: h.mem}
	h.store, h.cfg.Store = fs, fs
	h.rebuildExecutor()
	return h, fs
}

func TestRefreshStoreErrorDropsLeadership(t *testing.T) {
	h, fs := newFailingHarness(t)
	h.startLead()
	fs.failChanged.Store(true)
	h.clock.Advance(h.refreshInterval())
	err := h.leadResult()
	if !errors.Is(err, errDatabaseDown) || !strings.Contains(err.Error(), "refresh") {
		t.Fatalf("Lead returned %v, want the refresh's store error", err)
	}
}

func TestRebuildStoreErrorDropsLeadership(t *testing.T) {
	h, fs := newFailingHarness(t)
	fs.failPending.Store(true)
	h.launchLead()
	if err := h.leadResult(); !errors.Is(err, errDatabaseDown) || !strings.Contains(err.Error(), "rebuild") {
		t.Fatalf("Lead returned %v, want the rebuild's store error", err)
	}
}

func TestShutdownRecordsTheCancelledCallAndLeaksNothing(t *testing.T) {
	before := goleak.IgnoreCurrent()
	h := newHarness(t)
	h.startLead()
	h.on("i-1", accepted.HeldUntil(make(chan struct{}))) // never answers
	h.submit("i-1", smsDeadline, `{}`)
	h.waitCall()

	h.stop() // shutdown: the call may finish during the drain...
	drainEnds := h.clock.Now().Add(executor.DefaultDrainTimeout)
	h.waitTimer(drainEnds)
	if n := h.gw.CallCount(); n != 1 {
		t.Fatalf("%d calls during the drain, want the one in flight only", n)
	}
	h.clock.Advance(executor.DefaultDrainTimeout) // ...but it never answers
	if err := h.leadResult(); err != nil {
		t.Fatalf("Lead returned %v on shutdown, want nil", err)
	}
	goleak.VerifyNone(t, before) // every worker, timer watcher and the scheduler are gone
	in, _ := h.mem.GetIntent(h.ctx, "i-1")
	a := in.Attempts[0]
	if !a.Finished() || !strings.Contains(a.Error, context.Canceled.Error()) {
		t.Fatalf("the cancelled call's attempt is %+v, want finished with the cancellation error", a)
	}
	if in.Status != core.StatusPending || !in.NextDueAt.Equal(a.FinishedAt.Add(core.DefaultRetryDelay)) {
		t.Fatalf("after shutdown: %s due %v, want pending and retried by the next leader", in.Status, in.NextDueAt)
	}
}

func TestShutdownLetsACallInFlightFinishAndRecordsItsOutcome(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	release := make(chan struct{})
	h.on("i-1", accepted.HeldUntil(release))
	h.on("i-2", accepted)
	h.submit("i-1", smsDeadline, `{}`)
	h.waitCall()

	h.stop()
	h.waitTimer(h.clock.Now().Add(executor.DefaultDrainTimeout)) // draining
	h.submit("i-2", smsDeadline, `{}`)                           // arrives during the drain
	close(release)                                               // the gateway answers in time
	if err := h.leadResult(); err != nil {
		t.Fatalf("Lead returned %v on shutdown, want nil", err)
	}
	in := h.waitStatus("i-1", core.StatusAccepted)
	if in.Attempts[0].Error != "" || in.Attempts[0].Outcome == nil {
		t.Fatalf("the call that finished during the drain was not recorded as answered: %+v", in.Attempts[0])
	}
	if calls := h.gw.CallsFor("i-2"); len(calls) != 0 {
		t.Fatalf("an attempt was dispatched during the drain: %+v", calls)
	}
}

func TestNotifyWhileNotLeadingIsIgnoredAndNeverBlocks(t *testing.T) {
	h := newHarness(t)
	in := core.NewIntent("i-1", smsDeadline, []byte(`{}`), t0)
	for range 10_000 { // more than any buffer: Notify must drop, not block
		h.executor.Notify(in)
	}
	h.on("i-1", accepted)
	if _, err := h.store.CreateIntent(h.ctx, in); err != nil {
		t.Fatal(err)
	}
	h.startLead() // the rebuild, not the stale notifications, schedules it
	h.waitStatus("i-1", core.StatusAccepted)
	h.settle(time.Minute)
	if n := h.gw.CallCount(); n != 1 {
		t.Fatalf("gateway called %d times, want 1", n)
	}
}

// leaderFlipStore turns the elector's leadership check false right after a
// successful StartAttempt, as a process paused between the reservation and
// the gateway call finds when it resumes.
type leaderFlipStore struct {
	ports.Store
	h *harness
}

func (s leaderFlipStore) StartAttempt(ctx context.Context, p ports.StartAttemptParams) error {
	err := s.Store.StartAttempt(ctx, p)
	if err == nil {
		s.h.leader.Store(false)
	}
	return err
}

func (s leaderFlipStore) StartAttempts(ctx context.Context, ps []ports.StartAttemptParams) []error {
	return startEach(ctx, ps, s.StartAttempt)
}

func TestLeadershipLostAfterReservationMakesNoGatewayCall(t *testing.T) {
	h := newHarness(t)
	fs := leaderFlipStore{Store: h.mem, h: h}
	h.store, h.cfg.Store = fs, fs
	h.rebuildExecutor()
	h.startLead()
	h.on("p-1", accepted)
	h.submit("p-1", smsDeadline, `{}`)
	if err := h.leadResult(); !errors.Is(err, core.ErrFenced) {
		t.Fatalf("Lead returned %v, want lost leadership", err)
	}
	if n := h.gw.CallCount(); n != 0 {
		t.Fatalf("%d gateway calls after leadership was lost; want none", n)
	}
	in, err := h.mem.GetIntent(h.ctx, "p-1")
	if err != nil {
		t.Fatal(err)
	}
	if in.Status != core.StatusPending || len(in.Attempts) != 1 || !in.Attempts[0].Finished() ||
		in.Attempts[0].Error != executor.NotSubmittedError {
		t.Fatalf("intent after the lost reservation: %+v", in)
	}
	if in.Attempts[0].Sent {
		t.Fatal("the attempt closed before the gateway call is stored as sent")
	}
}

package executor_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/gatewayfake"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// TestMain fails the package if any test leaves a goroutine behind: Lead
// must return only after everything it started has stopped.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)

// The contracts the tests submit to, one per policy and mode.
var (
	smsDeadline = core.Contract{
		SubmissionTarget: "sms.realtime", GatewayType: core.GatewaySMS, GatewayURL: "http://sms-a.test",
		Mode: core.ModeRealtime, Policy: core.PolicyDeadline, MaxAcceptanceSeconds: 30,
		TerminalOutcomes: []string{core.ReasonInvalidRequest, core.ReasonInvalidRecipient, core.ReasonInvalidMessage},
	}
	smsMaxAttempts = core.Contract{
		SubmissionTarget: "sms.batch", GatewayType: core.GatewaySMS, GatewayURL: "http://sms-b.test",
		Mode: core.ModeBatch, Policy: core.PolicyMaxAttempts, MaxAttempts: 3,
		TerminalOutcomes: []string{core.ReasonInvalidRecipient},
	}
	pushOneShot = core.Contract{
		SubmissionTarget: "push.oneshot", GatewayType: core.GatewayPush, GatewayURL: "http://push-a.test",
		Mode: core.ModeRealtime, Policy: core.PolicyOneShot,
		TerminalOutcomes: []string{core.ReasonUnregisteredToken},
	}
	pushBatch = core.Contract{
		SubmissionTarget: "push.batch", GatewayType: core.GatewayPush, GatewayURL: "http://push-b.test",
		Mode: core.ModeBatch, Policy: core.PolicyMaxAttempts, MaxAttempts: 5,
		TerminalOutcomes: []string{core.ReasonUnregisteredToken},
	}
)

// harness is one instance's executor over an in-memory store, with a fake
// clock shared by the executor and the store's "database time", and a strict
// fake gateway at the contracts' URLs. Intents come in as the intake service
// stores them (see submit); intake itself is not the subject here.
type harness struct {
	t        *testing.T
	ctx      context.Context
	clock    *clocktest.Clock
	store    ports.Store
	mem      *memstore.Store
	gw       *gatewayfake.Gateway
	metrics  *recordingMetrics
	executor *executor.Executor
	cfg      executor.Config

	lease   core.Lease
	leader  atomic.Bool
	leadErr chan error
	stop    context.CancelFunc
}

// option adjusts the executor configuration before New.
type option func(*executor.Config)

func withMaxInFlight(n int) option { return func(c *executor.Config) { c.MaxInFlight = n } }

func newHarness(t *testing.T, opts ...option) *harness {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	h := &harness{t: t, ctx: ctx, clock: clocktest.New(t0), metrics: newRecordingMetrics()}
	h.mem = memstore.New(h.clock)
	h.store = h.mem
	h.gw = newGateway(t, h.clock, "executor-tests")
	h.cfg = executor.Config{
		Store:         h.store,
		Gateways:      map[core.GatewayType]ports.Gateway{core.GatewaySMS: h.gw, core.GatewayPush: h.gw},
		Clock:         h.clock,
		MaxInFlight:   4,
		FinishTimeout: 7 * time.Minute, // an odd value, so its timer never looks like a due timer
		Metrics:       h.metrics,
		// Logs go to the test's output, shown for failures and with -v.
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, o := range opts {
		o(&h.cfg)
	}
	h.rebuildExecutor()
	h.leader.Store(true) // the elector's view until a test says otherwise
	return h
}

// rebuildExecutor creates the executor from h.cfg (after a test changed it).
func (h *harness) rebuildExecutor() {
	h.t.Helper()
	e, err := executor.New(h.cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	h.executor = e
}

// startLead acquires the lease for this instance and runs Lead until
// stopLead, returning once the scheduler finished its first round (it armed
// its first refresh timer).
func (h *harness) startLead() {
	h.t.Helper()
	firstRefresh := h.clock.Now().Add(h.refreshInterval())
	h.launchLead()
	h.waitTimer(firstRefresh)
}

// launchLead acquires the lease and starts Lead without waiting for it.
func (h *harness) launchLead() {
	h.t.Helper()
	lease, ok, err := h.mem.Acquire(h.ctx, ports.AcquireLeaseParams{
		LeaseName: core.DefaultLeaseName, HolderID: "instance-a", Duration: 24 * time.Hour,
	})
	if err != nil || !ok {
		h.t.Fatalf("acquire: ok=%v err=%v", ok, err)
	}
	h.lease = lease
	ctx, cancel := context.WithCancel(h.ctx)
	h.stop = cancel
	errc := make(chan error, 1) // this term's own: a test may lead twice
	h.leadErr = errc
	eng := h.executor
	go func() { errc <- eng.Lead(ctx, lease, h.leader.Load) }()
	h.t.Cleanup(func() {
		cancel()
		<-errc // goleak also checks nothing outlives the test
	})
}

// takeOver makes another instance the lease holder behind this one's back:
// the lease is released (as if it had expired) and acquired by instance-b.
// This instance's elector has not noticed, so stillLeader stays true and
// only the store's fence can stop the executor.
func (h *harness) takeOver() {
	h.t.Helper()
	if err := h.mem.Release(h.ctx, h.lease.Fence()); err != nil {
		h.t.Fatal(err)
	}
	l, ok, err := h.mem.Acquire(h.ctx, ports.AcquireLeaseParams{
		LeaseName: core.DefaultLeaseName, HolderID: "instance-b", Duration: 24 * time.Hour,
	})
	if err != nil || !ok || l.Epoch != h.lease.Epoch+1 {
		h.t.Fatalf("takeover: %+v ok=%v err=%v", l, ok, err)
	}
}

// stopLead cancels Lead and returns its result.
func (h *harness) stopLead() error {
	h.t.Helper()
	h.stop()
	select {
	case err := <-h.leadErr:
		h.leadErr <- err // for the cleanup
		return err
	case <-h.ctx.Done():
		h.t.Fatal("Lead did not return after its context was cancelled")
		return nil
	}
}

// leadResult waits for Lead to return on its own (leadership lost).
func (h *harness) leadResult() error {
	h.t.Helper()
	select {
	case err := <-h.leadErr:
		h.leadErr <- err
		return err
	case <-h.ctx.Done():
		h.t.Fatal("Lead did not return after losing leadership")
		return nil
	}
}

func (h *harness) refreshInterval() time.Duration {
	if h.cfg.RefreshInterval > 0 {
		return h.cfg.RefreshInterval
	}
	return executor.DefaultRefreshInterval
}

// waitIntent blocks until the stored intent satisfies cond.
func (h *harness) waitIntent(id string, what string, cond func(core.Intent) bool) core.Intent {
	h.t.Helper()
	in, err := h.mem.WaitIntent(h.ctx, id, cond)
	if err != nil {
		h.t.Fatalf("waiting until %s %s: %v", id, what, err)
	}
	return in
}

func (h *harness) waitStatus(id string, s core.IntentStatus) core.Intent {
	h.t.Helper()
	return h.waitIntent(id, "is "+string(s), func(in core.Intent) bool { return in.Status == s })
}

// waitAttempts blocks until n attempts are finished.
func (h *harness) waitAttempts(id string, n int) core.Intent {
	h.t.Helper()
	return h.waitIntent(id, fmt.Sprintf("has %d finished attempts", n), func(in core.Intent) bool {
		return in.AttemptCount == n && len(in.Attempts) == n && in.Attempts[n-1].Finished()
	})
}

// waitTimer blocks until the executor armed a timer for at: the scheduler has
// done everything it does before waiting.
func (h *harness) waitTimer(at time.Time) {
	h.t.Helper()
	if err := h.clock.WaitForTimer(h.ctx, at); err != nil {
		h.t.Fatalf("no timer armed for %s (pending: %v): %v", at.Sub(t0), h.clock.Timers(), err)
	}
}

// settle advances the clock by d and waits until the scheduler has handled
// it: refreshed, dispatched whatever was due, and armed its next refresh.
func (h *harness) settle(d time.Duration) {
	h.t.Helper()
	h.clock.Advance(d)
	h.waitTimer(h.clock.Now().Add(h.refreshInterval()))
}

// awaitInFlightRoundTrip waits until, after the mark-th in-flight report,
// the executor reported more than base attempts in flight and then base
// again: a dispatch whose result the scheduler has taken in.
func (h *harness) awaitInFlightRoundTrip(mark, base int) {
	h.t.Helper()
	err := h.metrics.await(h.ctx, func(m *recordingMetrics) bool {
		after := m.inFlight[min(mark, len(m.inFlight)):]
		i := slices.IndexFunc(after, func(n int) bool { return n > base })
		return i >= 0 && slices.Contains(after[i:], base)
	})
	if err != nil {
		h.t.Fatalf("no dispatch round trip after in-flight report %d: %v", mark, err)
	}
}

// awaitIdle waits until the scheduler is idle, so the test may move the
// clock: every attempt dispatched after the mark-th in-flight report came
// back (awaitInFlightRoundTrip(mark, 0)), none is in flight, and the
// scheduler waits again with its timers armed, the last of them for at:
// the due time of the head of its schedule, or its next refresh when the
// schedule is empty. Then a clock move meets the schedule the test expects:
// a result still on its way would reach the scheduler only after the move,
// and settle, which waits for the timers the move fires, would return
// before what that result made due had run.
func (h *harness) awaitIdle(mark int, at time.Time) {
	h.t.Helper()
	h.awaitInFlightRoundTrip(mark, 0)
	for {
		n, last := h.metrics.inFlightReports()
		if last == 0 {
			h.waitTimer(at)
			// No report since: the timer is the wait's after the last result.
			if again, _ := h.metrics.inFlightReports(); again == n {
				return
			}
			continue
		}
		err := h.metrics.await(h.ctx, func(m *recordingMetrics) bool { return len(m.inFlight) > n })
		if err != nil {
			h.t.Fatalf("%d attempts still in flight: %v", last, err)
		}
	}
}

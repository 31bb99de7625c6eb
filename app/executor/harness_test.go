package executor_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/app/intake"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
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

// Gateway answers the scripts use.
var (
	accepted        = reply{outcome: core.Outcome{Status: core.OutcomeAccepted, MessageID: "m-1"}}
	providerFailure = reply{outcome: core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonProviderFailure}}
)

func rejected(reason string) reply {
	return reply{outcome: core.Outcome{Status: core.OutcomeRejected, Reason: reason}}
}

// harness is one instance's executor and intake service over an in-memory store,
// with a fake clock shared by the executor and the store's "database time".
type harness struct {
	t        *testing.T
	ctx      context.Context
	clock    *clocktest.Clock
	store    ports.Store
	mem      *memstore.Store
	gw       *scriptedGateway
	metrics  *recordingMetrics
	executor *executor.Executor
	service  *intake.Service
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
	h.gw = newScriptedGateway(t, h.clock)
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
	h.useRegistry(smsDeadline, smsMaxAttempts, pushOneShot, pushBatch)
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

// useRegistry replaces the service with one over a registry of contracts, as
// a restart with an edited registry file would.
func (h *harness) useRegistry(contracts ...core.Contract) {
	h.t.Helper()
	reg, err := core.NewRegistry(contracts)
	if err != nil {
		h.t.Fatal(err)
	}
	svc, err := intake.NewService(intake.ServiceConfig{
		Registry: reg, Store: h.store, Clock: h.clock, Metrics: h.metrics, Notifier: h.executor,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	h.service = svc
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

func (h *harness) submit(id string, c core.Contract, payload string) ports.SubmitIntentResult {
	h.t.Helper()
	res, err := h.service.SubmitIntent(h.ctx, ports.SubmitIntentParams{
		IntentID: id, SubmissionTarget: c.SubmissionTarget, Payload: []byte(payload),
	})
	if err != nil {
		h.t.Fatalf("submit %s: %v", id, err)
	}
	return res
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

// reply is one scripted gateway answer.
type reply struct {
	outcome core.Outcome
	err     error
	// hold, when set, delays the answer until it is closed; a cancelled
	// call returns the context's error instead.
	hold chan struct{}
}

// gatewayCall is one recorded Submit.
type gatewayCall struct {
	params ports.SubmitParams
	at     time.Time
}

// scriptedGateway answers each reference with its scripted replies in order
// and fails the test on any call it has no reply for.
type scriptedGateway struct {
	t     *testing.T
	clock ports.Clock

	mu        sync.Mutex
	script    map[string][]reply
	calls     []gatewayCall
	active    int
	maxActive int
	called    chan gatewayCall
}

func newScriptedGateway(t *testing.T, clock ports.Clock) *scriptedGateway {
	return &scriptedGateway{t: t, clock: clock, script: map[string][]reply{}, called: make(chan gatewayCall, 1024)}
}

func (g *scriptedGateway) on(reference string, replies ...reply) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.script[reference] = append(g.script[reference], replies...)
}

func (g *scriptedGateway) Submit(ctx context.Context, p ports.SubmitParams) (core.Outcome, error) {
	g.mu.Lock()
	call := gatewayCall{params: p, at: g.clock.Now()}
	g.calls = append(g.calls, call)
	steps := g.script[p.Reference]
	if len(steps) == 0 {
		g.mu.Unlock()
		g.t.Errorf("gateway called for %q with no scripted reply left", p.Reference)
		g.called <- call
		return core.Outcome{}, errors.New("unscripted call")
	}
	r := steps[0]
	g.script[p.Reference] = steps[1:]
	g.active++
	g.maxActive = max(g.maxActive, g.active)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.active--
		g.mu.Unlock()
	}()
	g.called <- call
	if r.hold != nil {
		select {
		case <-r.hold:
		case <-ctx.Done():
			return core.Outcome{}, ctx.Err()
		}
	}
	return r.outcome, r.err
}

// waitCall returns the next call the gateway received.
func (h *harness) waitCall() gatewayCall {
	h.t.Helper()
	select {
	case c := <-h.gw.called:
		return c
	case <-h.ctx.Done():
		h.t.Fatal("no gateway call arrived")
		return gatewayCall{}
	}
}

func (g *scriptedGateway) callsFor(reference string) []gatewayCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []gatewayCall
	for _, c := range g.calls {
		if c.params.Reference == reference {
			out = append(out, c)
		}
	}
	return out
}

// references lists the references of all calls in arrival order.
func (g *scriptedGateway) references() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, len(g.calls))
	for i, c := range g.calls {
		out[i] = c.params.Reference
	}
	return out
}

// maxConcurrent is the most calls that were ever under way at once.
func (g *scriptedGateway) maxConcurrent() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.maxActive
}

func (g *scriptedGateway) callCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.calls)
}

// recordingMetrics keeps every event, for assertions on what operators see.
type recordingMetrics struct {
	mu        sync.Mutex
	created   map[string]int
	completed []string
	attempts  []string
	latencies []time.Duration
	lateness  []time.Duration
	inFlight  []int
	fenced    int
	// possiblyAccepted and lookups record the in-doubt events.
	possiblyAccepted []string
	lookups          []string
	// protection records the gateway protection's events (protect_test.go).
	protection []string
	// changed is closed and replaced on every event, for await.
	changed chan struct{}
}

var _ ports.Metrics = (*recordingMetrics)(nil)

func newRecordingMetrics() *recordingMetrics {
	return &recordingMetrics{created: map[string]int{}, changed: make(chan struct{})}
}

// record runs f under the lock and wakes await callers.
func (m *recordingMetrics) record(f func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f()
	close(m.changed)
	m.changed = make(chan struct{})
}

// await blocks until cond, evaluated under the lock, holds.
func (m *recordingMetrics) await(ctx context.Context, cond func(*recordingMetrics) bool) error {
	for {
		m.mu.Lock()
		ok, changed := cond(m), m.changed
		m.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

func (m *recordingMetrics) IntentCreated(target string) {
	m.record(func() { m.created[target]++ })
}

func (m *recordingMetrics) IntentCompleted(target string, s core.IntentStatus, reason string) {
	m.record(func() { m.completed = append(m.completed, fmt.Sprintf("%s %s %s", target, s, reason)) })
}

func (m *recordingMetrics) AttemptFinished(gt core.GatewayType, result string, latency time.Duration) {
	m.record(func() {
		m.attempts = append(m.attempts, fmt.Sprintf("%s %s", gt, result))
		m.latencies = append(m.latencies, latency)
	})
}

func (m *recordingMetrics) FirstAttemptLateness(d time.Duration) {
	m.record(func() { m.lateness = append(m.lateness, d) })
}

func (m *recordingMetrics) InFlightAttempts(n int) {
	m.record(func() { m.inFlight = append(m.inFlight, n) })
}

func (m *recordingMetrics) ScheduleSize(int)       {}
func (m *recordingMetrics) Leadership(bool, int64) {}

func (m *recordingMetrics) FencedWrite() {
	m.record(func() { m.fenced++ })
}

func (m *recordingMetrics) IntentPossiblyAccepted(target string) {
	m.record(func() { m.possiblyAccepted = append(m.possiblyAccepted, target) })
}

func (m *recordingMetrics) InDoubtLookup(gt core.GatewayType, answer string) {
	m.record(func() { m.lookups = append(m.lookups, fmt.Sprintf("%s %s", gt, answer)) })
}

func (m *recordingMetrics) maxInFlight() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, v := range m.inFlight {
		n = max(n, v)
	}
	return n
}

// inFlightReports returns how many in-flight reports were made so far and
// the last one (0 before any).
func (m *recordingMetrics) inFlightReports() (n, last int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.inFlight) == 0 {
		return 0, 0
	}
	return len(m.inFlight), m.inFlight[len(m.inFlight)-1]
}

func (m *recordingMetrics) firstAttemptLateness() []time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]time.Duration(nil), m.lateness...)
}

func (m *recordingMetrics) snapshot() (completed, attempts []string, fenced int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.completed...), append([]string(nil), m.attempts...), m.fenced
}

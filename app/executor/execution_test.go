package executor_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/gatewayfake"
	"github.com/submissionmanager/submission-manager/ports"
)

func TestFirstAttemptRunsAtOnce(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.on("i-1", accepted)
	h.submit("i-1", smsDeadline, `{}`)

	c := h.waitCall()
	if !c.At.Equal(t0) {
		t.Fatalf("first attempt at %v, want at submission (t0) without the clock moving", c.At.Sub(t0))
	}
	in := h.waitStatus("i-1", core.StatusAccepted)
	if !in.Attempts[0].StartedAt.Equal(in.CreatedAt) {
		t.Fatalf("attempt 1 started %v after creation", in.Attempts[0].StartedAt.Sub(in.CreatedAt))
	}
	if err := h.stopLead(); err != nil {
		t.Fatal(err)
	}
	if got := h.metrics.firstAttemptLateness(); !slices.Equal(got, []time.Duration{0}) {
		t.Fatalf("FirstAttemptLateness %v, want [0]", got)
	}
}

func TestDeadlineExhaustsWhenTheNextRetryWouldMissIt(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	// Attempts at 0, 5, ..., 25 s; after the sixth the next would be due at
	// 30 s, not strictly before the 30 s deadline.
	for range 6 {
		h.on("i-1", providerFailure)
	}
	h.submit("i-1", smsDeadline, `{}`)
	for n := 1; n < 6; n++ {
		in := h.waitAttempts("i-1", n)
		h.waitTimer(in.NextDueAt)
		h.clock.AdvanceTo(in.NextDueAt)
	}
	in := h.waitStatus("i-1", core.StatusExhausted)
	if in.ExhaustedReason != core.ExhaustedDeadlineExceeded || in.AttemptCount != 6 {
		t.Fatalf("%s after %d attempts, want deadline_exceeded after 6", in.ExhaustedReason, in.AttemptCount)
	}
	if last := in.Attempts[5].StartedAt.Sub(t0); last != 25*time.Second {
		t.Fatalf("last attempt at %v, want 25s", last)
	}
}

// invalidAnswer is the reply of a gateway adapter to an answer that
// core.NewOutcome refuses: an error, never an outcome.
func invalidAnswer(status core.OutcomeStatus, messageID string) gatewayfake.Step {
	_, err := core.NewOutcome(status, "", messageID)
	if err == nil {
		panic(fmt.Sprintf("core.NewOutcome accepted status %q without a reason", status))
	}
	return failed(err)
}

func TestInvalidOutcomesAreNonTerminalAttemptErrors(t *testing.T) {
	cases := []struct {
		name    string
		step    gatewayfake.Step
		wantErr string
	}{
		{"missing status", invalidAnswer("", "x"), "has no status"},
		{"rejected without reason", invalidAnswer(core.OutcomeRejected, ""), "rejected without a reason"},
		{"unknown status", invalidAnswer("queued", ""), `unknown status "queued"`},
		{"transport error", failed(errors.New("dial tcp: connection refused")), "connection refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.startLead()
			h.on("i-1", tc.step)
			h.submit("i-1", smsDeadline, `{}`)
			in := h.waitAttempts("i-1", 1)
			a := in.Attempts[0]
			if a.Outcome != nil || !strings.Contains(a.Error, tc.wantErr) {
				t.Fatalf("attempt recorded outcome=%+v error=%q, want an error containing %q", a.Outcome, a.Error, tc.wantErr)
			}
			if in.Status != core.StatusPending || !in.NextDueAt.Equal(a.FinishedAt.Add(core.DefaultRetryDelay)) {
				t.Fatalf("status %s next due %v, want pending and retried", in.Status, in.NextDueAt)
			}
			if err := h.stopLead(); err != nil {
				t.Fatal(err)
			}
			if _, attempts, _ := h.metrics.snapshot(); !slices.Equal(attempts, []string{"sms error"}) {
				t.Fatalf("AttemptFinished events %v", attempts)
			}
		})
	}
}

func TestTerminalIntentIsAppendOnly(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.on("i-1", accepted)
	mark, _ := h.metrics.inFlightReports()
	created := h.submit("i-1", smsDeadline, `{}`)
	done := h.waitStatus("i-1", core.StatusAccepted)
	h.awaitInFlightRoundTrip(mark, 0) // the scheduler has taken the result in

	// A stale notification (the intent as it was when created) reaches the
	// scheduler after the intent ended: the worker must read the store,
	// find it terminal, and call nobody.
	mark, _ = h.metrics.inFlightReports()
	h.executor.Notify(created)
	h.awaitInFlightRoundTrip(mark, 0)
	for range 3 {
		h.settle(time.Minute)
	}
	if err := h.stopLead(); err != nil {
		t.Fatal(err)
	}
	if n := h.gw.CallCount(); n != 1 {
		t.Fatalf("gateway called %d times for a terminal intent, want 1", n)
	}
	after, _ := h.mem.GetIntent(h.ctx, "i-1")
	if mustJSON(t, after) != mustJSON(t, done) {
		t.Fatalf("terminal intent changed:\n%+v\n%+v", done, after)
	}
}

func TestRealtimeIsDispatchedBeforeBatchAtEqualDueTime(t *testing.T) {
	h := newHarness(t, withMaxInFlight(1))
	// Both due at t0; the batch one is created first and sorts first by id,
	// so only the mode can put the realtime one ahead.
	h.on("a-batch", accepted)
	h.on("z-realtime", accepted)
	h.submit("a-batch", pushBatch, `{}`)
	h.submit("z-realtime", smsDeadline, `{}`)
	h.startLead()

	h.waitStatus("a-batch", core.StatusAccepted)
	if err := h.stopLead(); err != nil {
		t.Fatal(err)
	}
	if order := h.gw.References(); !slices.Equal(order, []string{"z-realtime", "a-batch"}) {
		t.Fatalf("dispatch order %v, want realtime first", order)
	}
}

func TestMaxInFlightBoundsConcurrentAttempts(t *testing.T) {
	h := newHarness(t, withMaxInFlight(2)) // ReserveAhead defaults to 2 as well
	holds := map[string]chan struct{}{}
	for i := range 5 {
		id := fmt.Sprintf("i-%d", i)
		holds[id] = make(chan struct{})
		h.on(id, accepted.HeldUntil(holds[id]))
		h.submit(id, smsDeadline, `{}`)
	}
	h.startLead() // the first round dispatched what it could and armed its refresh

	first, second := h.waitCall(), h.waitCall()
	// Two more attempts are reserved ahead of a free slot; the fifth waits
	// in the schedule.
	h.settle(time.Second) // a refresh sees every row; still nothing more may start
	if h.gw.CallCount() != 2 || h.metrics.maxInFlight() > 4 {
		t.Fatalf("%d calls, max in flight %d with two held: the bounds leaked (want 2 calls, at most 4 attempts)",
			h.gw.CallCount(), h.metrics.maxInFlight())
	}

	// Releasing one call frees one slot for the next intent, and so on.
	close(holds[first.Params.Reference])
	h.waitStatus(first.Params.Reference, core.StatusAccepted)
	third := h.waitCall()
	for _, c := range []gatewayfake.Call{second, third} {
		close(holds[c.Params.Reference])
	}
	for range 2 {
		c := h.waitCall()
		close(holds[c.Params.Reference])
	}
	for id := range holds {
		h.waitStatus(id, core.StatusAccepted)
	}
	if err := h.stopLead(); err != nil {
		t.Fatal(err)
	}
	// The bound is on gateway calls. Attempts in flight also count those
	// reserved ahead (ReserveAhead) and those recording their results,
	// which gave their slot back (MaxInFlight more).
	if active := h.gw.MaxConcurrent(); active != 2 || h.metrics.maxInFlight() > 6 {
		t.Fatalf("gateway saw %d concurrent calls, executor reported %d attempts in flight; want 2 calls, at most 6 attempts", active, h.metrics.maxInFlight())
	}
}

func TestNoTwoAttemptsOfOneIntentAtOnce(t *testing.T) {
	h := newHarness(t, withMaxInFlight(4))
	h.startLead()
	hold := make(chan struct{})
	h.on("i-1", accepted.HeldUntil(hold))
	created := h.submit("i-1", smsDeadline, `{}`)
	h.waitCall()

	// While the call is held, with three slots free: a refresh reads the
	// row (changed by StartAttempt, still pending and due) ...
	h.settle(time.Second)
	if n := h.metrics.maxInFlight(); n != 1 {
		t.Fatalf("max in flight %d after a refresh saw the running intent, want 1", n)
	}
	// ... and a stale notification arrives, followed by a new intent's
	// notification, so once the new one has run the stale one was handled.
	mark, _ := h.metrics.inFlightReports()
	h.executor.Notify(created)
	h.on("i-2", accepted)
	h.submit("i-2", smsDeadline, `{}`)
	h.waitStatus("i-2", core.StatusAccepted)
	h.awaitInFlightRoundTrip(mark, 1)
	if n := h.metrics.maxInFlight(); n != 2 {
		t.Fatalf("max in flight %d, want 2 (i-1 held, i-2): i-1 ran twice at once", n)
	}
	close(hold)
	in := h.waitStatus("i-1", core.StatusAccepted)
	if in.AttemptCount != 1 || len(h.gw.CallsFor("i-1")) != 1 {
		t.Fatalf("%d attempts, %d calls; want 1", in.AttemptCount, len(h.gw.CallsFor("i-1")))
	}
}

func TestStaleNotificationNeverAdvancesARetry(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.on("i-1", providerFailure, accepted)
	created := h.submit("i-1", smsDeadline, `{}`)
	in := h.waitAttempts("i-1", 1)
	h.waitTimer(in.NextDueAt) // the scheduler holds the retry at t0+5s

	// The notification of i-1's creation (due t0) arrives late, followed by
	// i-2's; once i-2 has run, the stale one was handled.
	mark, _ := h.metrics.inFlightReports()
	h.executor.Notify(created)
	h.on("i-2", accepted)
	h.submit("i-2", smsDeadline, `{}`)
	h.waitStatus("i-2", core.StatusAccepted)
	h.awaitIdle(mark, in.NextDueAt)
	if n := len(h.gw.CallsFor("i-1")); n != 1 {
		t.Fatalf("i-1 called %d times before its retry was due, want 1", n)
	}
	h.clock.AdvanceTo(in.NextDueAt)
	in = h.waitStatus("i-1", core.StatusAccepted)
	if !in.Attempts[1].StartedAt.Equal(t0.Add(core.DefaultRetryDelay)) {
		t.Fatalf("retry at %v, want 5s", in.Attempts[1].StartedAt.Sub(t0))
	}
}

func TestMissingGatewayIsAnAttemptError(t *testing.T) {
	h := newHarness(t)
	h.cfg.Gateways = map[core.GatewayType]ports.Gateway{core.GatewaySMS: h.gw}
	h.rebuildExecutor()
	h.startLead()
	h.submit("p-1", pushOneShot, `{}`)

	in := h.waitStatus("p-1", core.StatusExhausted)
	if !strings.Contains(in.Attempts[0].Error, `no gateway configured for gateway type "push"`) {
		t.Fatalf("attempt error %q", in.Attempts[0].Error)
	}
}

func TestRebuildPagesThroughEveryPendingIntent(t *testing.T) {
	h := newHarness(t, func(c *executor.Config) { c.RebuildPageSize = 2 })
	var ids []string
	for i := range 5 {
		id := fmt.Sprintf("i-%d", i)
		ids = append(ids, id)
		h.on(id, accepted)
		h.submit(id, pushBatch, `{}`)
	}
	h.startLead()
	for _, id := range ids {
		h.waitStatus(id, core.StatusAccepted)
	}
}

func TestLeadRefusesASecondConcurrentTerm(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	err := h.executor.Lead(context.Background(), h.lease, func() bool { return true })
	if err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("second Lead: %v, want a refusal", err)
	}
}

func TestNewRefusesIncompleteConfig(t *testing.T) {
	h := newHarness(t)
	bad := map[string]func(*executor.Config){
		"no store":        func(c *executor.Config) { c.Store = nil },
		"no clock":        func(c *executor.Config) { c.Clock = nil },
		"no gateway":      func(c *executor.Config) { c.Gateways = nil },
		"nil gateway":     func(c *executor.Config) { c.Gateways = map[core.GatewayType]ports.Gateway{core.GatewaySMS: nil} },
		"negative bound":  func(c *executor.Config) { c.MaxInFlight = -1 },
		"negative period": func(c *executor.Config) { c.RefreshInterval = -time.Second },
	}
	for name, edit := range bad {
		cfg := h.cfg
		edit(&cfg)
		if _, err := executor.New(cfg); err == nil {
			t.Errorf("%s: New accepted the config", name)
		}
	}
}

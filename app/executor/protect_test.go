package executor_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/app/protection"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var gatewayDown = failed(errors.New("HTTP 503"))

func withProtection(p protection.Config) option {
	return func(c *executor.Config) { c.Protection = p }
}

// testBreaker opens after two failures and probes after 10 s, then 20 s.
func testBreaker() *core.BreakerConfig {
	return &core.BreakerConfig{Threshold: 2, Window: time.Minute, OpenFor: 10 * time.Second, MaxOpenFor: 20 * time.Second}
}

var _ ports.ProtectionMetrics = (*recordingMetrics)(nil)

func (m *recordingMetrics) BreakerTransition(url string, from, to core.BreakerState) {
	m.record(func() { m.protection = append(m.protection, fmt.Sprintf("breaker %s %s->%s", url, from, to)) })
}

func (m *recordingMetrics) AttemptDeferred(url, reason string) {
	m.record(func() { m.protection = append(m.protection, fmt.Sprintf("deferred %s %s", url, reason)) })
}

func (m *recordingMetrics) CallLimited(url, limit string) {
	m.record(func() { m.protection = append(m.protection, fmt.Sprintf("limited %s %s", url, limit)) })
}

func (m *recordingMetrics) GatewaysPaused(n int) {}

// awaitProtection waits until n events starting with prefix were recorded.
func (h *harness) awaitProtection(prefix string, n int) {
	h.t.Helper()
	err := h.metrics.await(h.ctx, func(m *recordingMetrics) bool {
		c := 0
		for _, e := range m.protection {
			if strings.HasPrefix(e, prefix) {
				c++
			}
		}
		return c >= n
	})
	if err != nil {
		h.t.Fatalf("no %d events %q: %v (have %v)", n, prefix, err, h.protectionEvents())
	}
}

// deadlineOnB is a deadline target on smsMaxAttempts's gateway URL: the
// breaker of that URL is theirs together.
func deadlineOnB() core.Contract {
	deadlineB := smsDeadline
	deadlineB.SubmissionTarget, deadlineB.GatewayURL = "sms.deadline-b", smsMaxAttempts.GatewayURL
	return deadlineB
}

func (h *harness) protectionEvents() []string {
	h.metrics.mu.Lock()
	defer h.metrics.mu.Unlock()
	return slices.Clone(h.metrics.protection)
}

// While a gateway's breaker is open its due attempts are deferred to the
// probe: no attempt row, no try spent. One probe goes through; its success
// closes the breaker and the deferred intents run.
func TestOpenBreakerDefersWithoutSpendingTriesThenOneProbeCloses(t *testing.T) {
	h := newHarness(t, withMaxInFlight(1), withProtection(protection.Config{Breaker: testBreaker()}))
	h.on("i-1", gatewayDown, accepted)
	h.on("i-2", gatewayDown, accepted)
	h.on("i-3", accepted)
	h.startLead()
	mark, _ := h.metrics.inFlightReports()
	h.submit("i-1", smsMaxAttempts, `{}`)
	h.waitAttempts("i-1", 1)
	h.submit("i-2", smsMaxAttempts, `{}`)
	h.waitAttempts("i-2", 1) // the second failure opens the breaker: probe at t0+10s
	h.awaitProtection("breaker http://sms-b.test closed->open", 1)
	probeAt := t0.Add(10 * time.Second)
	h.submit("i-3", smsMaxAttempts, `{}`)
	h.awaitProtection("deferred http://sms-b.test breaker_open", 1)
	h.waitIntent("i-3", "deferred to the probe", func(in core.Intent) bool { return in.NextDueAt.Equal(probeAt) })
	h.awaitIdle(mark, t0.Add(5*time.Second)) // every result taken in: i-1 and i-2 are due first
	mark, _ = h.metrics.inFlightReports()
	h.settle(5 * time.Second) // i-1 and i-2 fall due and are deferred too
	h.awaitProtection("deferred http://sms-b.test breaker_open", 3)
	for _, id := range []string{"i-1", "i-2", "i-3"} {
		// The deferral is counted before its reschedule is written: wait
		// for the write.
		h.waitIntent(id, "deferred without a try", func(in core.Intent) bool {
			return in.Status == core.StatusPending && len(in.Attempts) == in.AttemptCount &&
				in.NextDueAt.Equal(probeAt)
		})
	}
	if n := h.gw.CallCount(); n != 2 {
		t.Fatalf("gateway called %d times while open, want only the 2 failures", n)
	}
	h.awaitIdle(mark, probeAt)
	h.settle(5 * time.Second)
	for _, id := range []string{"i-1", "i-2", "i-3"} {
		h.waitStatus(id, core.StatusAccepted)
	}
	if n := h.gw.CallCount(); n != 5 {
		t.Fatalf("gateway calls = %d, want 2 failures + 1 probe + 2 after closing", n)
	}
	for _, id := range []string{"i-1", "i-2", "i-3"} {
		for _, a := range mustGet(h, id).Attempts {
			if a.Error != "" && a.Error != "HTTP 503" {
				t.Fatalf("%s has an attempt that is not a gateway call: %+v", id, a)
			}
		}
	}
	h.awaitProtection("breaker http://sms-b.test half_open->closed", 1)
}

func mustGet(h *harness, id string) core.Intent {
	h.t.Helper()
	in, err := h.mem.GetIntent(h.ctx, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return in
}

// A failed probe reopens the breaker for longer; a deadline intent whose
// retry would then miss its deadline is not exhausted at once but deferred
// to its last try, a second before the deadline, which the open breaker
// lets through: when the gateway is still down then, the intent ends by
// its deadline after that try, and no other call goes to the open gateway.
func TestDeferralPastTheDeadlineWaitsForTheLastTryAndAFailedProbeReopensLonger(t *testing.T) {
	h := newHarness(t, withMaxInFlight(1), withProtection(protection.Config{Breaker: testBreaker()}))
	deadlineB := deadlineOnB()
	h.on("b-1", gatewayDown, accepted)
	h.on("b-2", gatewayDown, accepted)
	h.on("d-1", gatewayDown, gatewayDown) // the probe fails, and so does the last try
	h.startLead()
	h.submit("b-1", smsMaxAttempts, `{}`)
	h.waitAttempts("b-1", 1)
	h.submit("b-2", smsMaxAttempts, `{}`)
	h.waitAttempts("b-2", 1)
	// Each deferral is waited for until the scheduler has its result (the
	// in-flight count is back to 0) and waits again, not only its verdict:
	// an intent still in flight at the probe time would leave the probe to
	// the next one, and a result taken in while the clock moves is due a
	// move late.
	mark, _ := h.metrics.inFlightReports()
	h.submit("d-1", deadlineB, `{}`) // deadline t0+30s; deferred to the probe at t0+10s
	h.awaitProtection("deferred", 1)
	h.awaitIdle(mark, t0.Add(5*time.Second)) // b-1 and b-2's retries
	mark, _ = h.metrics.inFlightReports()
	h.settle(5 * time.Second)
	h.awaitProtection("deferred", 3)
	h.awaitIdle(mark, t0.Add(10*time.Second)) // the probe
	mark, _ = h.metrics.inFlightReports()
	h.settle(5 * time.Second) // t0+10s: d-1 probes and fails; reopened until t0+30s
	h.waitAttempts("d-1", 1)
	h.awaitProtection("breaker http://sms-b.test half_open->open", 1)
	h.awaitIdle(mark, t0.Add(15*time.Second)) // d-1's retry; b-1 and b-2 deferred to t0+30s
	mark, _ = h.metrics.inFlightReports()
	h.settle(5 * time.Second) // t0+15s: d-1's retry would wait for t0+30s, its deadline
	lastTry := t0.Add(30*time.Second - core.LastTryLead)
	d := h.waitIntent("d-1", "deferred to its last try", func(in core.Intent) bool {
		return in.Status.Terminal() || in.NextDueAt.Equal(lastTry)
	})
	if d.Status != core.StatusPending || d.AttemptCount != 1 {
		t.Fatalf("d-1 at t0+15s: %s (%s) with %d attempts; want pending until its last try at %s",
			d.Status, d.ExhaustedReason, d.AttemptCount, lastTry.Sub(t0))
	}
	h.awaitIdle(mark, lastTry)
	mark, _ = h.metrics.inFlightReports()
	h.settle(lastTry.Sub(h.clock.Now())) // the open breaker lets the last try through; it fails
	d = h.waitStatus("d-1", core.StatusExhausted)
	if d.ExhaustedReason != core.ExhaustedDeadlineExceeded {
		t.Fatalf("d-1: %+v", d)
	}
	if calls := h.gw.CallsFor("d-1"); len(d.Attempts) != 2 || len(calls) != 2 || !calls[1].At.Equal(lastTry) {
		t.Fatalf("d-1 has %d attempts and calls %+v; want the probe and the last try at %s", len(d.Attempts), calls, lastTry.Sub(t0))
	}
	h.awaitIdle(mark, t0.Add(30*time.Second))
	h.clock.AdvanceTo(t0.Add(30 * time.Second))
	h.waitTimer(h.clock.Now().Add(time.Second))
	for _, id := range []string{"b-1", "b-2"} {
		in := h.waitStatus(id, core.StatusAccepted)
		if in.AttemptCount != 2 {
			t.Fatalf("%s spent %d tries, want the failure and the acceptance", id, in.AttemptCount)
		}
	}
	for _, c := range h.gw.Calls() {
		if c.At.After(t0.Add(10*time.Second)) && c.At.Before(t0.Add(30*time.Second)) &&
			!(c.Params.Reference == "d-1" && c.At.Equal(lastTry)) {
			t.Fatalf("a call of %s at %s while the breaker was open", c.Params.Reference, c.At.Sub(t0))
		}
	}
}

// One gateway's open breaker changes nothing for another gateway.
func TestOneGatewaysOutageDoesNotHoldAnother(t *testing.T) {
	h := newHarness(t, withMaxInFlight(1), withProtection(protection.Config{Breaker: testBreaker()}))
	h.on("b-1", gatewayDown)
	h.on("b-2", gatewayDown)
	h.startLead()
	mark, _ := h.metrics.inFlightReports()
	h.submit("b-1", smsMaxAttempts, `{}`)
	h.waitAttempts("b-1", 1)
	h.submit("b-2", smsMaxAttempts, `{}`)
	h.waitAttempts("b-2", 1)
	h.awaitIdle(mark, t0.Add(5*time.Second)) // both retries scheduled, not only stored
	h.settle(5 * time.Second)                // both deferred to t0+10s
	h.awaitProtection("deferred", 2)
	for i := range 5 {
		id := fmt.Sprintf("p-%d", i)
		h.on(id, accepted)
		h.submit(id, pushBatch, `{}`)
		h.waitStatus(id, core.StatusAccepted)
	}
}

// A per-gateway max in flight holds work in the schedule; it is neither
// dropped nor spent, and other gateways use the free slots.
func TestGatewayMaxInFlightHoldsWorkWithoutSpendingIt(t *testing.T) {
	h := newHarness(t, withMaxInFlight(4), withProtection(protection.Config{
		Limits: []protection.GatewayLimit{{GatewayURL: smsMaxAttempts.GatewayURL, MaxInFlight: 1}},
	}))
	hold := make(chan struct{})
	for i := range 3 {
		h.on(fmt.Sprintf("b-%d", i), accepted.HeldUntil(hold))
	}
	h.on("p-1", accepted)
	h.startLead()
	for i := range 3 {
		h.submit(fmt.Sprintf("b-%d", i), smsMaxAttempts, `{}`)
	}
	h.awaitProtection("limited http://sms-b.test max_in_flight", 2)
	h.submit("p-1", pushBatch, `{}`)
	h.waitStatus("p-1", core.StatusAccepted)
	close(hold)
	for i := range 3 {
		in := h.waitStatus(fmt.Sprintf("b-%d", i), core.StatusAccepted)
		if in.AttemptCount != 1 {
			t.Fatalf("%s: %d attempts", in.IntentID, in.AttemptCount)
		}
	}
	if n := len(h.gw.CallsFor("b-0")) + len(h.gw.CallsFor("b-1")) + len(h.gw.CallsFor("b-2")); n != 3 {
		t.Fatalf("%d calls for three intents", n)
	}
	if m := h.gw.MaxConcurrent(); m > 2 {
		t.Fatalf("%d calls at once: sms-b's limit of 1 plus push's", m)
	}
}

// A token-bucket rate spreads calls at the configured rate; waiting calls
// each reserve their own time.
func TestGatewayRateLimitSpacesCalls(t *testing.T) {
	h := newHarness(t, withProtection(protection.Config{
		Limits: []protection.GatewayLimit{{GatewayType: core.GatewaySMS, Rate: 2, Burst: 1}},
	}), func(c *executor.Config) { c.RefreshInterval = 250 * time.Millisecond })
	for i := range 3 {
		h.on(fmt.Sprintf("b-%d", i), accepted)
	}
	h.startLead()
	mark, _ := h.metrics.inFlightReports()
	for i := range 3 {
		h.submit(fmt.Sprintf("b-%d", i), smsMaxAttempts, `{}`)
	}
	var at []time.Duration
	at = append(at, h.waitCall().At.Sub(t0))
	h.awaitProtection("limited http://sms-b.test rate", 2)
	h.awaitIdle(mark, t0.Add(500*time.Millisecond)) // the limited attempts wait in the schedule
	mark, _ = h.metrics.inFlightReports()
	h.settle(500 * time.Millisecond)
	at = append(at, h.waitCall().At.Sub(t0))
	h.awaitIdle(mark, t0.Add(time.Second))
	h.settle(500 * time.Millisecond)
	at = append(at, h.waitCall().At.Sub(t0))
	for i := range 3 {
		h.waitStatus(fmt.Sprintf("b-%d", i), core.StatusAccepted)
	}
	if fmt.Sprint(at) != "[0s 500ms 1s]" {
		t.Fatalf("calls at %v, want one every 500 ms", at)
	}
}

// The retry table picks the policy by gateway type and mode, and the delay
// grows with tries.
func TestRetryTableChoosesThePolicyPerGatewayTypeAndMode(t *testing.T) {
	table := core.NewRetryTable(core.RetryRule{
		Key:    core.RetryKey{GatewayType: core.GatewaySMS, Mode: core.ModeBatch},
		Policy: core.Exponential{Base: time.Second, Factor: 3, Max: time.Minute, Jitter: core.JitterNone},
	})
	h := newHarness(t, withProtection(protection.Config{Retry: &table}))
	h.on("b-1", gatewayDown, gatewayDown)
	h.startLead()
	mark, _ := h.metrics.inFlightReports()
	h.submit("b-1", smsMaxAttempts, `{}`)
	in := h.waitAttempts("b-1", 1)
	if !in.NextDueAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("after try 1 due at %s, want 1s", in.NextDueAt.Sub(t0))
	}
	h.awaitIdle(mark, in.NextDueAt)
	h.settle(time.Second)
	in = h.waitAttempts("b-1", 2)
	if !in.NextDueAt.Equal(t0.Add(4 * time.Second)) {
		t.Fatalf("after try 2 due at %s, want 1s+3s", in.NextDueAt.Sub(t0))
	}
}

// A well-formed rejection is the provider's answer, not the gateway's
// failure: a run of provider_failure rejections never opens the breaker,
// unless the operator lists the reason.
func TestRejectionsOpenTheBreakerOnlyWhenListed(t *testing.T) {
	for _, listed := range []bool{false, true} {
		t.Run(fmt.Sprintf("listed=%v", listed), func(t *testing.T) {
			p := protection.Config{Breaker: testBreaker()}
			if listed {
				p.FailureReasons = []string{core.ReasonProviderFailure}
			}
			h := newHarness(t, withMaxInFlight(1), withProtection(p))
			h.on("b-1", providerFailure, accepted)
			h.on("b-2", providerFailure, accepted)
			h.startLead()
			mark, _ := h.metrics.inFlightReports()
			h.submit("b-1", smsMaxAttempts, `{}`)
			h.waitAttempts("b-1", 1)
			h.submit("b-2", smsMaxAttempts, `{}`)
			h.waitAttempts("b-2", 1)
			h.awaitIdle(mark, t0.Add(5*time.Second)) // both retries scheduled, not only stored
			h.settle(5 * time.Second)
			if !listed {
				h.waitStatus("b-1", core.StatusAccepted)
				h.waitStatus("b-2", core.StatusAccepted)
				if ev := h.protectionEvents(); len(ev) != 0 {
					t.Fatalf("rejections moved the breaker: %v", ev)
				}
				return
			}
			h.awaitProtection("deferred http://sms-b.test breaker_open", 2)
			if n := h.gw.CallCount(); n != 2 {
				t.Fatalf("%d calls with the breaker open", n)
			}
		})
	}
}

// The pause is the database's: a new leader reads it before its first
// dispatch, so a failover never lets a call through to a paused gateway.
func TestPauseHoldsAcrossANewLeadershipTerm(t *testing.T) {
	h := newHarness(t)
	h.cfg.Protection.Pauses = h.mem
	h.rebuildExecutor()
	h.on("b-1", accepted)
	h.startLead()
	if _, err := h.mem.PauseGateway(h.ctx, core.GatewayPause{GatewayURL: smsMaxAttempts.GatewayURL}); err != nil {
		t.Fatal(err)
	}
	h.settle(time.Second) // the leader reads the pause at its refresh
	h.submit("b-1", smsMaxAttempts, `{}`)
	h.awaitProtection("deferred", 1)
	if err := h.stopLead(); err != nil {
		t.Fatal(err)
	}
	if err := h.mem.Release(h.ctx, h.lease.Fence()); err != nil {
		t.Fatal(err)
	}
	h.rebuildExecutor() // a new process: no memory of the pause but the store's
	h.startLead()
	mark, _ := h.metrics.inFlightReports()
	h.settle(protection.DefaultPauseRecheck) // b-1 falls due under the new leader, which defers it again
	h.awaitProtection("deferred", 2)
	if n := h.gw.CallCount(); n != 0 {
		t.Fatalf("%d calls to the paused gateway across the new term", n)
	}
	h.awaitIdle(mark, h.clock.Now().Add(protection.DefaultPauseRecheck)) // the deferral is scheduled, not only counted
	if _, err := h.mem.ResumeGateway(h.ctx, "", smsMaxAttempts.GatewayURL); err != nil {
		t.Fatal(err)
	}
	h.settle(protection.DefaultPauseRecheck)
	h.waitStatus("b-1", core.StatusAccepted)
}

package executor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/protection"
	"github.com/submissionmanager/submission-manager/core"
)

// A paused gateway gets no call: its due attempts are deferred (no attempt,
// no try) until the pause is lifted, which the leader sees at its next
// refresh; the deadline rule still ends intents that would wait past it.
func TestPausedGatewayGetsNoCallsUntilResumed(t *testing.T) {
	h := newHarness(t)
	h.cfg.Protection.Pauses = h.mem
	h.rebuildExecutor()
	if _, err := h.mem.PauseGateway(h.ctx, core.GatewayPause{GatewayType: core.GatewaySMS}); err != nil {
		t.Fatal(err)
	}
	h.on("b-1", accepted)
	h.on("p-1", accepted)
	h.startLead() // reads the pause before anything runs
	mark, _ := h.metrics.inFlightReports()
	h.submit("b-1", smsMaxAttempts, `{}`)
	h.submit("d-1", smsDeadline, `{}`) // 30 s deadline: waits 5 s at a time, then its last try, then exhausts
	h.submit("p-1", pushBatch, `{}`)
	h.waitStatus("p-1", core.StatusAccepted) // push is not paused
	h.waitIntent("b-1", "deferred", func(in core.Intent) bool { return in.NextDueAt.Equal(t0.Add(protection.DefaultPauseRecheck)) })
	// Each deferral must have reached the scheduler before the clock moves,
	// not only the store: one taken in during the move is due a move late.
	h.awaitIdle(mark, t0.Add(protection.DefaultPauseRecheck))
	for range 4 {
		mark, _ = h.metrics.inFlightReports()
		h.settle(protection.DefaultPauseRecheck)
		h.awaitIdle(mark, h.clock.Now().Add(protection.DefaultPauseRecheck))
	}
	// At 25 s the next recheck would miss the deadline: d-1 waits for its
	// last try, a second before the deadline, instead of ending now.
	mark, _ = h.metrics.inFlightReports()
	h.settle(protection.DefaultPauseRecheck)
	lastTry := t0.Add(30*time.Second - core.LastTryLead)
	h.waitIntent("d-1", "waiting for its last try", func(in core.Intent) bool { return in.NextDueAt.Equal(lastTry) })
	h.awaitIdle(mark, lastTry)
	// The pause holds at the last try too: no try can start before the
	// deadline any more, and d-1 ends without a call.
	h.settle(lastTry.Sub(h.clock.Now()))
	d := h.waitStatus("d-1", core.StatusExhausted)
	if d.ExhaustedReason != core.ExhaustedDeadlineExceeded || d.AttemptCount != 0 {
		t.Fatalf("deadline intent under a pause: %+v", d)
	}
	if b := mustGet(h, "b-1"); b.AttemptCount != 0 || b.Status != core.StatusPending {
		t.Fatalf("max_attempts intent under a pause: %+v", b)
	}
	if n := len(h.gw.CallsFor("b-1")) + len(h.gw.CallsFor("d-1")); n != 0 {
		t.Fatalf("%d calls to the paused gateway", n)
	}
	// b-1 was deferred at 25 s to 30 s; it must not read the pause after
	// the resume below.
	h.waitIntent("b-1", "deferred to 30 s", func(in core.Intent) bool {
		return in.NextDueAt.Equal(t0.Add(30 * time.Second))
	})
	if ok, err := h.mem.ResumeGateway(h.ctx, core.GatewaySMS, ""); err != nil || !ok {
		t.Fatal(ok, err)
	}
	h.settle(t0.Add(30 * time.Second).Sub(h.clock.Now()))
	if b := h.waitStatus("b-1", core.StatusAccepted); b.AttemptCount != 1 {
		t.Fatalf("after resume: %+v", b)
	}
}

func TestGatewayServiceShowsTheLeadersViewAndStoresPauses(t *testing.T) {
	h := newHarness(t, withProtection(protection.Config{Breaker: testBreaker()}))
	h.on("b-1", gatewayDown)
	h.startLead()
	h.submit("b-1", smsMaxAttempts, `{}`)
	h.waitAttempts("b-1", 1)
	svc, err := protection.NewGatewayService(protection.GatewayServiceConfig{
		Targets: registry(t).Contracts, Pauses: h.mem, Executor: h.executor,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PauseGateway(h.ctx, "", smsDeadline.GatewayURL); err != nil {
		t.Fatal(err)
	}
	o, err := svc.Gateways(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Leader || len(o.Gateways) != 4 || len(o.Pauses) != 1 {
		t.Fatalf("overview = %+v", o)
	}
	for _, g := range o.Gateways {
		switch g.GatewayURL {
		case smsDeadline.GatewayURL:
			if !g.Paused || g.Executor != nil || g.Targets[0] != smsDeadline.SubmissionTarget {
				t.Fatalf("sms-a: %+v", g)
			}
		case smsMaxAttempts.GatewayURL:
			if g.Paused || g.Executor == nil || g.Executor.Breaker != core.BreakerClosed ||
				g.Executor.RecentCalls != 1 || g.Executor.RecentFailures != 1 {
				t.Fatalf("sms-b: %+v %+v", g, g.Executor)
			}
		}
	}
	var fe *core.FieldError
	if _, err := svc.PauseGateway(h.ctx, "fax", ""); !errors.As(err, &fe) || fe.Field != "gatewayType" {
		t.Fatalf("pause of an unknown type: %v", err)
	}
	if ok, err := svc.ResumeGateway(h.ctx, "", smsDeadline.GatewayURL); !ok || err != nil {
		t.Fatalf("resume: %v %v", ok, err)
	}
	none, _ := protection.NewGatewayService(protection.GatewayServiceConfig{Targets: registry(t).Contracts})
	if _, err := none.PauseGateway(h.ctx, core.GatewaySMS, ""); !errors.Is(err, core.ErrPausesUnavailable) {
		t.Fatalf("pause without a pause store: %v", err)
	}
	if o, _ := none.Gateways(h.ctx); o.Leader || len(o.Gateways) != 4 {
		t.Fatalf("overview without an executor: %+v", o)
	}
}

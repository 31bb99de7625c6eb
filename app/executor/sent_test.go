package executor_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// growingDelay is a retry policy that waits tries × 10 s and records every
// count it is asked for, so a test sees what the executor passed it.
type growingDelay struct {
	mu    sync.Mutex
	asked []int
}

func (g *growingDelay) Delay(tries int) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked = append(g.asked, tries)
	return time.Duration(tries) * 10 * time.Second
}

func (g *growingDelay) askedFor() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.asked)
}

func withRetry(p core.RetryPolicy) option { return func(c *executor.Config) { c.Retry = p } }

// closeFirstAttempt plays an earlier leader that reserved attempt 1 of id
// and closed it with the error text and Sent flag given, leaving the intent
// due at once, then let its lease go.
func (h *harness) closeFirstAttempt(id, text string, sent bool) {
	h.t.Helper()
	old, ok, err := h.mem.Acquire(h.ctx, ports.AcquireLeaseParams{
		LeaseName: core.DefaultLeaseName, HolderID: "instance-earlier", Duration: time.Hour,
	})
	if err != nil || !ok {
		h.t.Fatalf("acquire as the earlier leader: ok=%v err=%v", ok, err)
	}
	now := h.clock.Now()
	if err := h.mem.StartAttempt(h.ctx, ports.StartAttemptParams{Fence: old.Fence(), IntentID: id, Number: 1, StartedAt: now}); err != nil {
		h.t.Fatal(err)
	}
	if err := h.mem.FinishAttempt(h.ctx, ports.FinishAttemptParams{
		Fence: old.Fence(), IntentID: id, Number: 1, FinishedAt: now, Error: text, Sent: sent,
		Decision: core.Decision{Status: core.StatusPending, NextDueAt: now},
	}); err != nil {
		h.t.Fatal(err)
	}
	if err := h.mem.Release(h.ctx, old.Fence()); err != nil {
		h.t.Fatal(err)
	}
}

// runToTheEnd leads and lets every retry fall due until the intent is
// terminal, returning it. Each retry is waited for until the scheduler has
// it, not only the store, before the clock moves to it.
func (h *harness) runToTheEnd(id string, from int) core.Intent {
	h.t.Helper()
	mark, _ := h.metrics.inFlightReports()
	h.startLead()
	for n := from; ; n++ {
		in := h.waitAttempts(id, n)
		if in.Status.Terminal() {
			return in
		}
		h.awaitIdle(mark, in.NextDueAt)
		mark, _ = h.metrics.inFlightReports()
		h.settle(in.NextDueAt.Sub(h.clock.Now()))
	}
}

// An attempt closed as never sent is no try: the retry policy is asked with
// the count of tries, so the wait after the first real gateway call is the
// first delay, not the second, and max_attempts still allows its full number
// of calls.
func TestUnsentAttemptIsNoTryAndDoesNotGrowTheRetryDelay(t *testing.T) {
	retry := &growingDelay{}
	h := newHarness(t, withRetry(retry))
	h.submit("m-1", smsMaxAttempts, `{}`) // MaxAttempts: 3; no leader yet
	h.closeFirstAttempt("m-1", executor.NotSubmittedError, false)
	h.on("m-1", providerFailure, providerFailure, providerFailure)

	mark, _ := h.metrics.inFlightReports()
	h.startLead()
	in := h.waitAttempts("m-1", 2)
	if a := in.Attempts[1]; !a.Sent || !in.NextDueAt.Equal(a.FinishedAt.Add(10*time.Second)) {
		t.Fatalf("after the first call: attempt %+v, next due %v after it; want sent and the first delay (10s)",
			a, in.NextDueAt.Sub(a.FinishedAt))
	}
	h.awaitIdle(mark, in.NextDueAt)
	mark, _ = h.metrics.inFlightReports()
	h.settle(10 * time.Second)
	in = h.waitAttempts("m-1", 3)
	if a := in.Attempts[2]; !in.NextDueAt.Equal(a.FinishedAt.Add(20 * time.Second)) {
		t.Fatalf("after the second call: next due %v after it, want the second delay (20s)", in.NextDueAt.Sub(a.FinishedAt))
	}
	h.awaitIdle(mark, in.NextDueAt)
	h.settle(20 * time.Second)
	in = h.waitStatus("m-1", core.StatusExhausted)
	if calls := len(h.gw.CallsFor("m-1")); calls != 3 || in.AttemptCount != 4 || in.ExhaustedReason != core.ExhaustedMaxAttempts {
		t.Fatalf("%d calls, %d attempts, %q; want 3 calls, 4 attempts, max_attempts_reached", calls, in.AttemptCount, in.ExhaustedReason)
	}
	if got := retry.askedFor(); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("retry policy asked for tries %v, want [1 2 3]", got)
	}
}

// What an attempt counts as is data (Attempt.Sent), never its error text: an
// unsent attempt under any sentence is no try, and a sent attempt that
// happens to carry NotSubmittedError's sentence is one. Renaming that
// sentence therefore changes how no stored attempt counts.
func TestOnlySentDecidesWhatIsATry(t *testing.T) {
	cases := []struct {
		name      string
		text      string
		sent      bool
		wantCalls int
		wantAsked []int
	}{
		{"unsent under another sentence", "not submitted: a sentence someone reworded", false, 3, []int{1, 2, 3}},
		{"sent under NotSubmittedError's sentence", executor.NotSubmittedError, true, 2, []int{2, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			retry := &growingDelay{}
			h := newHarness(t, withRetry(retry))
			h.submit("m-1", smsMaxAttempts, `{}`) // MaxAttempts: 3
			h.closeFirstAttempt("m-1", c.text, c.sent)
			h.on("m-1", providerFailure, providerFailure, providerFailure)
			in := h.runToTheEnd("m-1", 2)
			if calls := len(h.gw.CallsFor("m-1")); calls != c.wantCalls || in.ExhaustedReason != core.ExhaustedMaxAttempts {
				t.Fatalf("%d gateway calls, %q; want %d calls, then max_attempts_reached", calls, in.ExhaustedReason, c.wantCalls)
			}
			if got := retry.askedFor(); !slices.Equal(got, c.wantAsked) {
				t.Fatalf("retry policy asked for tries %v, want %v", got, c.wantAsked)
			}
		})
	}
}

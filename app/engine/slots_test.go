package engine_test

import (
	"context"
	"sync"
	"testing"

	"github.com/submissionmanager/submission-manager/app/engine"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// blockingFinish holds the FinishAttempt of one intent until released, as a
// slow disk would hold a result write.
type blockingFinish struct {
	ports.Store
	intentID string
	entered  chan struct{}
	release  chan struct{}
}

func (s *blockingFinish) FinishAttempt(ctx context.Context, p ports.FinishAttemptParams) error {
	if p.IntentID == s.intentID {
		close(s.entered)
		<-s.release
	}
	return s.Store.FinishAttempt(ctx, p)
}

// TestResultWritesHoldNoGatewaySlot pins that MaxInFlight bounds gateway
// calls, not result writes: with one slot, the next due intent is called
// while the previous attempt's result is still being written, so a slow
// write does not stall the gateway pipeline (and the result is still
// durable before that intent's next attempt, which waits for it).
func TestResultWritesHoldNoGatewaySlot(t *testing.T) {
	slow := &blockingFinish{intentID: "i-slow", entered: make(chan struct{}), release: make(chan struct{})}
	h := newHarness(t, withMaxInFlight(1), func(c *engine.Config) {
		slow.Store = c.Store
		c.Store = slow
	})
	var once sync.Once
	unblock := func() { once.Do(func() { close(slow.release) }) }
	t.Cleanup(unblock) // a failing test must not leave the write held
	h.gw.on("i-slow", accepted)
	h.gw.on("i-next", accepted)
	h.submit("i-slow", smsDeadline, `{}`)
	h.startLead()
	if c := h.waitCall(); c.params.Reference != "i-slow" {
		t.Fatalf("first call for %s, want i-slow", c.params.Reference)
	}
	<-slow.entered // i-slow's result write is under way and held
	h.submit("i-next", smsDeadline, `{}`)
	if c := h.waitCall(); c.params.Reference != "i-next" {
		t.Fatalf("second call for %s, want i-next", c.params.Reference)
	}
	h.waitStatus("i-next", core.StatusAccepted)
	unblock()
	h.waitStatus("i-slow", core.StatusAccepted)
	if err := h.stopLead(); err != nil {
		t.Fatal(err)
	}
}

package engine_test

import (
	"context"
	"sync"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// countingStore counts GetIntent reads per intent and can refuse the next
// StartAttempt of an intent as not runnable, as the store does when the
// attempt count moved on behind the leader's back.
type countingStore struct {
	ports.Store
	mu       sync.Mutex
	reads    map[string]int
	refuseAt map[string]bool
}

func (s *countingStore) GetIntent(ctx context.Context, id string) (core.Intent, error) {
	s.mu.Lock()
	s.reads[id]++
	s.mu.Unlock()
	return s.Store.GetIntent(ctx, id)
}

func (s *countingStore) StartAttempt(ctx context.Context, p ports.StartAttemptParams) error {
	s.mu.Lock()
	refuse := s.refuseAt[p.IntentID]
	delete(s.refuseAt, p.IntentID)
	s.mu.Unlock()
	if refuse {
		return core.ErrIntentNotRunnable
	}
	return s.Store.StartAttempt(ctx, p)
}

func (s *countingStore) readsOf(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads[id]
}

func newCountingHarness(t *testing.T) (*harness, *countingStore) {
	h := newHarness(t)
	cs := &countingStore{Store: h.mem, reads: map[string]int{}, refuseAt: map[string]bool{}}
	h.store, h.cfg.Store = cs, cs
	h.rebuildEngine()
	h.useRegistry(smsMaxAttempts)
	return h, cs
}

func TestLocalIntentsRunWithoutStoreReads(t *testing.T) {
	h, cs := newCountingHarness(t)
	h.startLead()
	h.gw.on("k-1", providerFailure, accepted)
	h.submit("k-1", smsMaxAttempts, `{"to":"+1"}`)
	h.waitAttempts("k-1", 1)
	h.settle(5e9) // the fixed 5 s retry delay
	in := h.waitStatus("k-1", core.StatusAccepted)
	if in.AttemptCount != 2 {
		t.Fatalf("attempts %d, want 2", in.AttemptCount)
	}
	if n := cs.readsOf("k-1"); n != 0 {
		t.Fatalf("the engine read the intent %d times; the first attempt and the retry of a local intent need no read", n)
	}
	if calls := h.gw.callsFor("k-1"); len(calls) != 2 || string(calls[1].params.Payload) != `{"to":"+1"}` {
		t.Fatalf("gateway calls %+v", calls)
	}
}

func TestStaleKnownIntentIsReadAfreshAndStillRuns(t *testing.T) {
	h, cs := newCountingHarness(t)
	h.startLead()
	h.gw.on("k-2", accepted)
	cs.mu.Lock()
	cs.refuseAt["k-2"] = true // the cached state is refused once
	cs.mu.Unlock()
	h.submit("k-2", smsMaxAttempts, `{}`)
	in := h.waitStatus("k-2", core.StatusAccepted)
	if in.AttemptCount != 1 {
		t.Fatalf("attempts %d, want 1", in.AttemptCount)
	}
	if n := cs.readsOf("k-2"); n != 1 {
		t.Fatalf("store reads %d, want exactly 1 after the cached state was refused", n)
	}
}

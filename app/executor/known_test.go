package executor_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/submissionmanager/submission-manager/app/executor"
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
	// loads counts GetIntents calls, loaded the intents they returned.
	loads, loaded int
	// failLoads makes every GetIntents fail.
	failLoads bool
}

func (s *countingStore) GetIntents(ctx context.Context, ids []string) ([]core.Intent, error) {
	got, err := s.Store.GetIntents(ctx, ids)
	s.mu.Lock()
	if s.failLoads {
		got, err = nil, core.ErrStoreUnavailable
	}
	s.loads++
	s.loaded += len(got)
	s.mu.Unlock()
	return got, err
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

func (s *countingStore) StartAttempts(ctx context.Context, ps []ports.StartAttemptParams) []error {
	return startEach(ctx, ps, s.StartAttempt)
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
	h.rebuildExecutor()
	return h, cs
}

func TestLocalIntentsRunWithoutStoreReads(t *testing.T) {
	h, cs := newCountingHarness(t)
	h.startLead()
	h.on("k-1", providerFailure, accepted)
	mark, _ := h.metrics.inFlightReports()
	h.submit("k-1", smsMaxAttempts, `{"to":"+1"}`)
	in := h.waitAttempts("k-1", 1)
	h.awaitIdle(mark, in.NextDueAt) // the retry is scheduled, not only stored
	h.settle(5e9)                   // the fixed 5 s retry delay
	in = h.waitStatus("k-1", core.StatusAccepted)
	if in.AttemptCount != 2 {
		t.Fatalf("attempts %d, want 2", in.AttemptCount)
	}
	if n := cs.readsOf("k-1"); n != 0 {
		t.Fatalf("the executor read the intent %d times; the first attempt and the retry of a local intent need no read", n)
	}
	if calls := h.gw.CallsFor("k-1"); len(calls) != 2 || string(calls[1].Params.Payload) != `{"to":"+1"}` {
		t.Fatalf("gateway calls %+v", calls)
	}
}

func TestStaleKnownIntentIsReadAfreshAndStillRuns(t *testing.T) {
	h, cs := newCountingHarness(t)
	h.startLead()
	h.on("k-2", accepted)
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

func TestRebuiltIntentsRunWithoutPerIntentReads(t *testing.T) {
	h, cs := newCountingHarness(t)
	var ids []string
	for i := range 40 {
		id := fmt.Sprintf("r-%02d", i)
		ids = append(ids, id)
		h.on(id, accepted)
		h.submit(id, smsMaxAttempts, `{"to":"+1"}`)
	}
	h.startLead() // the rebuild finds the 40 intents; nothing is cached
	for _, id := range ids {
		h.waitStatus(id, core.StatusAccepted)
		if n := cs.readsOf(id); n != 0 {
			t.Errorf("intent %s read %d times; after a rebuild its state comes from the leader's read ahead", id, n)
		}
		if calls := h.gw.CallsFor(id); len(calls) != 1 || string(calls[0].Params.Payload) != `{"to":"+1"}` {
			t.Errorf("intent %s: gateway calls %+v", id, calls)
		}
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.loads == 0 || cs.loaded < len(ids) {
		t.Fatalf("GetIntents calls %d returning %d intents, want the %d intents read ahead", cs.loads, cs.loaded, len(ids))
	}
}

func TestReadAheadLeavesAnAttemptInDoubtToItsOwnRead(t *testing.T) {
	h, cs := newCountingHarness(t)
	h.on("fresh", accepted)
	h.on("orphan", accepted)
	h.submit("fresh", smsMaxAttempts, `{}`)
	h.submit("orphan", smsMaxAttempts, `{}`)
	orphanAttempt(h, "orphan") // attempt 1 left open: the cache may not hold it

	h.startLead()
	h.waitStatus("fresh", core.StatusAccepted)
	in := h.waitAttempts("orphan", 1)
	if a := in.Attempts[0]; a.Error != executor.OutcomeUnknownError || !a.Sent {
		t.Fatalf("the open attempt was closed as %+v, want outcome unknown", a)
	}
	if n := cs.readsOf("orphan"); n != 1 {
		t.Fatalf("the intent in doubt was read %d times, want 1: its attempt reads it with its attempts", n)
	}
	if n := cs.readsOf("fresh"); n != 0 {
		t.Fatalf("the fresh intent was read %d times, want 0", n)
	}
}

func TestFailedReadAheadLeavesEachAttemptItsOwnRead(t *testing.T) {
	h, cs := newCountingHarness(t)
	cs.failLoads = true
	for _, id := range []string{"f-1", "f-2", "f-3"} {
		h.on(id, accepted)
		h.submit(id, smsMaxAttempts, `{}`)
	}
	h.startLead()
	for _, id := range []string{"f-1", "f-2", "f-3"} {
		h.waitStatus(id, core.StatusAccepted)
		if n := cs.readsOf(id); n != 1 {
			t.Errorf("intent %s read %d times, want 1 after the read ahead failed", id, n)
		}
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.loads != 1 {
		t.Fatalf("GetIntents called %d times, want 1: a failed load is not tried again for the same intents", cs.loads)
	}
}

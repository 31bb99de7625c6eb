package executor_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// lateCommitStore hides some intents from reads until released, as a SQL
// Server transaction does whose last_modified_at was taken before a refresh
// passed it but which commits only after that refresh read.
type lateCommitStore struct {
	ports.Store
	mu     sync.Mutex
	hidden map[string]bool
}

func (s *lateCommitStore) release(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.hidden, id)
}

func (s *lateCommitStore) visible(rows []ports.ScheduleRow) []ports.ScheduleRow {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := rows[:0:0]
	for _, r := range rows {
		if !s.hidden[r.IntentID] {
			out = append(out, r)
		}
	}
	return out
}

func (s *lateCommitStore) ListChanged(ctx context.Context, p ports.ListChangedParams) ([]ports.ScheduleRow, error) {
	rows, err := s.Store.ListChanged(ctx, p)
	return s.visible(rows), err
}

func (s *lateCommitStore) ListPending(ctx context.Context, p ports.ListPendingParams) ([]ports.ScheduleRow, error) {
	rows, err := s.Store.ListPending(ctx, p)
	return s.visible(rows), err
}

func TestRefreshLookbackFindsChangesCommittedBehindTheCursor(t *testing.T) {
	for _, tc := range []struct {
		name      string
		lookback  time.Duration
		wantFound bool
	}{
		{"without lookback the late change is missed", 0, false},
		{"with lookback the late change is found", 2 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *executor.Config) { c.RefreshLookback = tc.lookback })
			late := &lateCommitStore{Store: h.mem, hidden: map[string]bool{"late": true}}
			h.store, h.cfg.Store = late, late
			h.rebuildExecutor()
			h.startLead()

			// Both intents come from a follower (no local notification); the
			// late one's timestamp is older but it "commits" after the
			// refresh that reads the other one.
			submit := func(id string) {
				t.Helper()
				h.on(id, accepted)
				h.submitElsewhere(late, id, smsDeadline, `{}`)
			}
			submit("late")
			h.clock.Advance(time.Millisecond)
			submit("other")

			mark, _ := h.metrics.inFlightReports()
			h.settle(h.refreshInterval() - time.Millisecond) // refresh reads "other" only
			h.waitStatus("other", core.StatusAccepted)
			// Its result taken in, the scheduler waits for its next refresh
			// only (the schedule is empty): a move while it takes the
			// result in would arm that refresh a whole move late.
			h.awaitIdle(mark, h.clock.Now().Add(h.refreshInterval()))
			late.release("late")
			h.settle(h.refreshInterval()) // the next refresh

			if tc.wantFound {
				h.waitStatus("late", core.StatusAccepted)
				return
			}
			if in, err := h.mem.GetIntent(h.ctx, "late"); err != nil || in.AttemptCount != 0 {
				t.Fatalf("late intent: attempts %d, err %v; the cursor alone was expected to skip it", in.AttemptCount, err)
			}
		})
	}
}

package memstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.InterventionStore = (*Store)(nil)

// CancelIntent ends a pending intent with no attempt open as cancelled and
// records the event, under the lock every StartAttempts also takes: of a
// cancel and a reservation, whichever takes the lock first wins, as the
// conditional write decides in SQL. See ports.InterventionStore.
func (s *Store) CancelIntent(ctx context.Context, p ports.IntentActionParams) (bool, error) {
	if err := ctxErr(ctx); err != nil {
		return false, err
	}
	if err := p.Validate(); err != nil {
		return false, fmt.Errorf("memstore: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.intents[p.IntentID]
	if !ok {
		return false, fmt.Errorf("%w: %q", core.ErrIntentNotFound, p.IntentID)
	}
	if last, open := in.LastAttempt(); in.Status.Terminal() || (open && !last.Finished()) {
		return false, ports.CancelVerdict(p.IntentID, in.Status, in.ExhaustedReason)
	}
	now := s.clock.Now()
	in.Status, in.ExhaustedReason, in.NextDueAt, in.LastModifiedAt = core.StatusExhausted, core.ExhaustedCancelled, time.Time{}, now
	s.record(p, core.ActionCancel, now)
	return true, nil
}

// RunIntentNow makes a pending intent that is due later due at the store's
// now and records the event. See ports.InterventionStore.
func (s *Store) RunIntentNow(ctx context.Context, p ports.IntentActionParams) (bool, error) {
	if err := ctxErr(ctx); err != nil {
		return false, err
	}
	if err := p.Validate(); err != nil {
		return false, fmt.Errorf("memstore: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.intents[p.IntentID]
	if !ok {
		return false, fmt.Errorf("%w: %q", core.ErrIntentNotFound, p.IntentID)
	}
	now := s.clock.Now()
	if in.Status.Terminal() || !in.NextDueAt.After(now) {
		return false, ports.RunNowVerdict(p.IntentID, in.Status)
	}
	in.NextDueAt, in.LastModifiedAt = now, now
	s.record(p, core.ActionRunNow, now)
	return true, nil
}

// record appends the action's event and wakes the waiters; s.mu is held.
func (s *Store) record(p ports.IntentActionParams, action core.IntentAction, now time.Time) {
	if s.events == nil {
		s.events = make(map[string][]core.IntentEvent)
	}
	events := s.events[p.IntentID]
	s.events[p.IntentID] = append(slices.Clip(events),
		core.IntentEvent{Number: len(events) + 1, At: now, Action: action, Actor: p.Actor})
	s.signal()
}

// IntentEvents returns a copy of the intent's events, oldest first.
func (s *Store) IntentEvents(ctx context.Context, intentID string) ([]core.IntentEvent, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events[intentID]), nil
}

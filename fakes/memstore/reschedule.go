package memstore

import (
	"context"
	"fmt"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.Rescheduler = (*Store)(nil)

// Reschedule moves a pending intent's next due time, or exhausts it with
// deadline_exceeded, without an attempt. See ports.Rescheduler.
func (s *Store) Reschedule(ctx context.Context, p ports.RescheduleParams) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	d := p.Decision
	s.mu.Lock()
	defer s.mu.Unlock()
	in, now, err := s.fencedIntent(p.Fence, p.IntentID)
	if err != nil {
		return err
	}
	open := len(in.Attempts) > 0 && !in.Attempts[len(in.Attempts)-1].Finished()
	if in.Status.Terminal() || in.AttemptCount != p.AttemptCount || open {
		return fmt.Errorf("%w: intent %q is %s with %d attempts, reschedule at %d asked",
			core.ErrIntentNotRunnable, p.IntentID, in.Status, in.AttemptCount, p.AttemptCount)
	}
	in.Status = d.Status
	in.NextDueAt = d.NextDueAt
	in.ExhaustedReason = d.ExhaustedReason
	in.LastModifiedAt = now
	s.signal()
	return nil
}

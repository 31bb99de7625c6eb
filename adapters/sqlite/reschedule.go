package sqlite

import (
	"context"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.Rescheduler = (*store)(nil)

// Reschedule applies a deferral's decision to a pending intent without an
// attempt, in one fenced statement that also stamps last_modified_at, so
// the next leader's rebuild and every refresh see the new due time. See
// ports.Rescheduler.
func (s *store) Reschedule(ctx context.Context, p ports.RescheduleParams) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	d := p.Decision
	params := sqlitedb.RescheduleIntentParams{
		Status:          string(d.Status),
		NextDueAt:       nullNanos(d.NextDueAt),
		ExhaustedReason: nullString(string(d.ExhaustedReason)),
		IntentID:        p.IntentID,
		AttemptCount:    int64(p.AttemptCount),
		LeaseName:       p.Fence.LeaseName,
		HolderID:        p.Fence.HolderID,
		LeaseEpoch:      p.Fence.Epoch,
	}
	return s.db.writeSingle(ctx, "reschedule", func(ctx context.Context, q *writeTx) error {
		stamp, err := q.Stamp(ctx)
		if err != nil {
			return err
		}
		params.LastModifiedAt = stamp
		n, err := q.RescheduleIntent(ctx, params)
		if err != nil {
			return err
		}
		if n == 0 {
			return whyRefused(ctx, q.Queries, p.Fence, p.IntentID)
		}
		return nil
	})
}

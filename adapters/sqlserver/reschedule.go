package sqlserver

import (
	"context"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.Rescheduler = (*store)(nil)

// Reschedule applies a deferral's decision to a pending intent without an
// attempt, fenced like StartAttempts: in one transaction it checks the fence
// (under the lease lock, see fence.go) and updates the intent row,
// moving last_modified_at strictly forward so every refresh sees the new
// due time. See ports.Rescheduler.
func (s *store) Reschedule(ctx context.Context, p ports.RescheduleParams) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("sqlserver: %w", err)
	}
	count, err := attemptNumber(p.AttemptCount)
	if err != nil {
		return err
	}
	params := sqlserverdb.RescheduleIntentParams{
		Status:          string(p.Decision.Status),
		NextDueAt:       nullTime(p.Decision.NextDueAt),
		ExhaustedReason: nullString(string(p.Decision.ExhaustedReason)),
		IntentID:        p.IntentID,
		AttemptCount:    count,
	}
	return s.inFencedTx(ctx, p.Fence, func(q *sqlserverdb.Queries) error {
		n, err := q.RescheduleIntent(ctx, params)
		if err != nil {
			return mapError(err)
		}
		if n == 0 {
			return notRunnable(ctx, q, p.IntentID,
				fmt.Sprintf("is not pending at attempt count %d with no attempt open", p.AttemptCount))
		}
		return nil
	})
}

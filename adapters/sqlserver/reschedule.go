package sqlserver

import (
	"context"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.Rescheduler = (*store)(nil)

// Reschedule applies a deferral's decision to a pending intent without an
// attempt, fenced like StartAttempt: in one transaction it checks the fence
// (under the lease lock, see fence.go) and updates the intent row,
// moving last_modified_at strictly forward so every refresh sees the new
// due time. See ports.Rescheduler.
func (s *store) Reschedule(ctx context.Context, p ports.RescheduleParams) error {
	count, err := attemptNumber(p.AttemptCount)
	if err != nil {
		return err
	}
	d := p.Decision
	if !(d.Status == core.StatusPending ||
		(d.Status == core.StatusExhausted && d.ExhaustedReason == core.ExhaustedDeadlineExceeded)) {
		return fmt.Errorf("sqlserver: reschedule %q: a deferral is pending or exhausted with %s, not %s %s",
			p.IntentID, core.ExhaustedDeadlineExceeded, d.Status, d.ExhaustedReason)
	}
	decision, err := applyDecisionParams(p.IntentID, count, d)
	if err != nil {
		return err
	}
	params := sqlserverdb.RescheduleIntentParams{
		Status:          decision.Status,
		NextDueAt:       decision.NextDueAt,
		ExhaustedReason: decision.ExhaustedReason,
		IntentID:        p.IntentID,
		AttemptCount:    count,
	}
	return s.db.inFencedTx(ctx, p.Fence, func(q *sqlserverdb.Queries) error {
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

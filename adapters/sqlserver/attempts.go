package sqlserver

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// notRunnable explains why a conditional update of an intent matched no
// row: core.ErrIntentNotFound when there is no such intent, otherwise
// core.ErrIntentNotRunnable with the reason given.
func notRunnable(ctx context.Context, q *sqlserverdb.Queries, intentID, why string) error {
	n, err := q.IntentExists(ctx, intentID)
	if err != nil {
		return mapError(err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %q", core.ErrIntentNotFound, intentID)
	}
	return fmt.Errorf("%w: intent %q %s", core.ErrIntentNotRunnable, intentID, why)
}

// attemptNumber converts an attempt number to the int column type. A number
// below 1 is passed on: it matches no intent's count, so the write fails
// with core.ErrIntentNotRunnable after the fence check, like any other
// number that is not the intent's next.
func attemptNumber(n int) (int32, error) {
	if n < math.MinInt32+1 || n > math.MaxInt32 {
		return 0, fmt.Errorf("sqlserver: attempt number %d out of range", n)
	}
	return int32(n), nil
}

// StartAttempt records attempt p.Number as started, fenced: in one
// transaction it checks the fence, counts the attempt on the intent (only
// while pending at attempt count Number-1) and inserts the attempt row.
func (s *store) StartAttempt(ctx context.Context, p ports.StartAttemptParams) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("sqlserver: %w", err)
	}
	number, err := attemptNumber(p.Number)
	if err != nil {
		return err
	}
	return s.db.inFencedTx(ctx, p.Fence, func(q *sqlserverdb.Queries) error {
		counted, err := q.StartAttempt(ctx, sqlserverdb.StartAttemptParams{
			IntentID: p.IntentID, AttemptNumber: number})
		if err != nil {
			return mapError(err)
		}
		if counted == 0 {
			return notRunnable(ctx, q, p.IntentID, fmt.Sprintf("is not pending at attempt count %d", p.Number-1))
		}
		err = mapError(q.InsertAttempt(ctx, sqlserverdb.InsertAttemptParams{
			IntentID:      p.IntentID,
			AttemptNumber: number,
			HolderID:      p.Fence.HolderID,
			LeaseEpoch:    p.Fence.Epoch,
			StartedAt:     dbTime(p.StartedAt),
		}))
		if errors.Is(err, errDuplicateKey) {
			return fmt.Errorf("%w: attempt %d of intent %q already exists", core.ErrIntentNotRunnable, p.Number, p.IntentID)
		}
		return err
	})
}

// FinishAttempt closes attempt p.Number and applies the policy's decision
// to the intent, fenced, in one transaction. The intent row is updated
// before the attempt row, the same order StartAttempt uses, so the two can
// never deadlock each other.
func (s *store) FinishAttempt(ctx context.Context, p ports.FinishAttemptParams) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("sqlserver: %w", err)
	}
	number, err := attemptNumber(p.Number)
	if err != nil {
		return err
	}
	finish := finishAttemptParams(p, number)
	decision := applyDecisionParams(p.IntentID, number, p.Decision)
	return s.db.inFencedTx(ctx, p.Fence, func(q *sqlserverdb.Queries) error {
		applied, err := q.ApplyDecision(ctx, decision)
		if err != nil {
			return mapError(err)
		}
		if applied == 0 {
			return notRunnable(ctx, q, p.IntentID, fmt.Sprintf("is not pending at attempt count %d", p.Number))
		}
		closed, err := q.FinishAttempt(ctx, finish)
		if err != nil {
			return mapError(err)
		}
		if closed == 0 {
			return fmt.Errorf("%w: attempt %d of intent %q is not in flight", core.ErrIntentNotRunnable, p.Number, p.IntentID)
		}
		if p.Decision.PossiblyAccepted {
			return mapError(q.MarkPossiblyAccepted(ctx, p.IntentID))
		}
		return nil
	})
}

// finishAttemptParams builds the attempt row's closing values from
// parameters that passed p.Validate: an outcome or an error text, exactly
// one. The schema's CHECKs stay the last word.
func finishAttemptParams(p ports.FinishAttemptParams, number int32) sqlserverdb.FinishAttemptParams {
	params := sqlserverdb.FinishAttemptParams{
		FinishedAt:    dbTime(p.FinishedAt),
		Error:         nullString(p.Error),
		Sent:          p.Sent,
		IntentID:      p.IntentID,
		AttemptNumber: number,
	}
	if p.Outcome != nil {
		params.OutcomeStatus = nullString(string(p.Outcome.Status))
		params.OutcomeReason = nullString(p.Outcome.Reason)
		params.MessageID = nullString(p.Outcome.MessageID)
	}
	return params
}

// applyDecisionParams builds the intent update from a decision that passed
// core.Decision.Validate, which refuses, with a message that names the
// rule, every decision the schema's CHECK constraints would refuse.
func applyDecisionParams(intentID string, number int32, d core.Decision) sqlserverdb.ApplyDecisionParams {
	params := sqlserverdb.ApplyDecisionParams{
		Status:          string(d.Status),
		NextDueAt:       nullTime(d.NextDueAt),
		ExhaustedReason: nullString(string(d.ExhaustedReason)),
		IntentID:        intentID,
		AttemptNumber:   number,
	}
	if o := d.FinalOutcome; o != nil {
		params.FinalOutcomeStatus = nullString(string(o.Status))
		params.FinalOutcomeReason = nullString(o.Reason)
		params.FinalMessageID = nullString(o.MessageID)
	}
	return params
}

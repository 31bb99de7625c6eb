package sqlite

import (
	"context"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// StartAttempt counts the attempt on its intent and records it as started,
// in one transaction, only while the fence holds its lease.
func (s *store) StartAttempt(ctx context.Context, p ports.StartAttemptParams) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return s.db.write(ctx, "start attempt", startWrite(p))
}

// StartAttempts hands every valid attempt's write to the group committer at
// once, so that they share its transactions as far as its queue allows, and
// answers each as StartAttempt would.
func (s *store) StartAttempts(ctx context.Context, ps []ports.StartAttemptParams) []error {
	return s.writeAll(ctx, "start attempt", ports.ValidateStarts(ps), func(i int) writeFunc { return startWrite(ps[i]) })
}

// FinishAttempts is StartAttempts for FinishAttempt.
func (s *store) FinishAttempts(ctx context.Context, ps []ports.FinishAttemptParams) []error {
	return s.writeAll(ctx, "finish attempt", ports.ValidateFinishes(ps), func(i int) writeFunc { return finishWrite(ps[i]) })
}

// writeAll writes the items a batch rule let through (errs[i] nil), each
// with its own write of one shared submission, and fills in their answers.
func (s *store) writeAll(ctx context.Context, op string, errs []error, write func(i int) writeFunc) []error {
	var fns []writeFunc
	var at []int
	for i, err := range errs {
		if err == nil {
			fns = append(fns, write(i))
			at = append(at, i)
		} else {
			errs[i] = fmt.Errorf("sqlite: %w", err)
		}
	}
	for k, err := range s.db.writer.doAll(ctx, op, verdictFirst, fns) {
		errs[at[k]] = err
	}
	return errs
}

// startWrite is the write of one attempt's start.
func startWrite(p ports.StartAttemptParams) writeFunc {
	return func(ctx context.Context, q *writeTx) error {
		stamp, err := q.Stamp(ctx)
		if err != nil {
			return err
		}
		n, err := q.StartAttempt(ctx, sqlitedb.StartAttemptParams{
			LastModifiedAt: stamp,
			IntentID:       p.IntentID,
			AttemptNumber:  int64(p.Number),
			LeaseName:      p.Fence.LeaseName,
			HolderID:       p.Fence.HolderID,
			LeaseEpoch:     p.Fence.Epoch,
		})
		if err != nil {
			return err
		}
		if n == 0 {
			return whyRefused(ctx, q.Queries, p.Fence, p.IntentID)
		}
		return q.InsertAttempt(ctx, sqlitedb.InsertAttemptParams{
			IntentID:      p.IntentID,
			AttemptNumber: int64(p.Number),
			HolderID:      p.Fence.HolderID,
			LeaseEpoch:    p.Fence.Epoch,
			StartedAt:     nanos(p.StartedAt),
		})
	}
}

// FinishAttempt closes the attempt (its outcome was validated where the
// gateway's answer entered the core; the schema's CHECKs stay the last
// word) and applies the decision to the intent in one transaction, only while the fence holds its lease; either both happen
// or neither. Only the intent's latest attempt can be finished, once, while
// the intent is pending; a leader that finds an attempt cut off by a crash
// finishes it (with an error) before it starts the next.
func (s *store) FinishAttempt(ctx context.Context, p ports.FinishAttemptParams) error {
	// Validate covers every CHECK that ApplyDecision can meet: ApplyDecision
	// runs after FinishAttempt changed the attempt, so a CHECK failing there
	// would fail the whole write batch, every other caller's write with it.
	if err := p.Validate(); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return s.db.write(ctx, "finish attempt", finishWrite(p))
}

// finishWrite is the write of one attempt's end and its decision.
func finishWrite(p ports.FinishAttemptParams) writeFunc {
	finish := sqlitedb.FinishAttemptParams{
		FinishedAt:    nullNanos(p.FinishedAt),
		Error:         nullString(p.Error),
		Sent:          p.Sent,
		IntentID:      p.IntentID,
		AttemptNumber: int64(p.Number),
		LeaseName:     p.Fence.LeaseName,
		HolderID:      p.Fence.HolderID,
		LeaseEpoch:    p.Fence.Epoch,
	}
	if o := p.Outcome; o != nil {
		finish.OutcomeStatus = nullString(string(o.Status))
		finish.OutcomeReason = nullString(o.Reason)
		finish.MessageID = nullString(o.MessageID)
	}
	d := p.Decision
	decision := sqlitedb.ApplyDecisionParams{
		Status:          string(d.Status),
		NextDueAt:       nullNanos(d.NextDueAt),
		ExhaustedReason: nullString(string(d.ExhaustedReason)),
		IntentID:        p.IntentID,
		AttemptNumber:   int64(p.Number),
	}
	if o := d.FinalOutcome; o != nil {
		decision.FinalOutcomeStatus = nullString(string(o.Status))
		decision.FinalOutcomeReason = nullString(o.Reason)
		decision.FinalMessageID = nullString(o.MessageID)
	}
	return func(ctx context.Context, q *writeTx) error {
		n, err := q.FinishAttempt(ctx, finish)
		if err != nil {
			return err
		}
		if n == 0 {
			return whyRefused(ctx, q.Queries, p.Fence, p.IntentID)
		}
		stamp, err := q.Stamp(ctx)
		if err != nil {
			return err
		}
		applied := decision
		applied.LastModifiedAt = stamp
		n, err = q.ApplyDecision(ctx, applied)
		if err != nil {
			return err
		}
		if n != 1 {
			// FinishAttempt checked what ApplyDecision requires, in this
			// transaction: the database contradicts itself. Not a verdict,
			// so the whole batch rolls back and nothing of this write stays.
			return fmt.Errorf("closed attempt %d of %q but its intent took %d decisions", p.Number, p.IntentID, n)
		}
		if d.PossiblyAccepted {
			if err := q.MarkPossiblyAccepted(ctx, p.IntentID); err != nil {
				return err
			}
		}
		if d.AcceptedAfterDeadline {
			return q.MarkAcceptedAfterDeadline(ctx, sqlitedb.MarkAcceptedAfterDeadlineParams{
				AcceptedMessageID: nullString(d.AcceptedMessageID), IntentID: p.IntentID})
		}
		return nil
	}
}

// whyRefused tells apart, inside the refused write's transaction, the two
// reasons a fenced write can affect no row: the lease is lost (ErrFenced,
// which wins) or the intent moved on (ErrIntentNotRunnable, or
// ErrIntentNotFound when there is no such intent).
func whyRefused(ctx context.Context, q *sqlitedb.Queries, f core.Fence, intentID string) error {
	holds, err := q.FenceHolds(ctx, sqlitedb.FenceHoldsParams{
		LeaseName: f.LeaseName, HolderID: f.HolderID, LeaseEpoch: f.Epoch,
	})
	if err != nil {
		return err
	}
	if !holds {
		return core.ErrFenced
	}
	found, err := q.IntentExists(ctx, intentID)
	if err != nil {
		return err
	}
	if !found {
		return core.ErrIntentNotFound
	}
	return core.ErrIntentNotRunnable
}

package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// CreateIntents inserts every intent whose intentId is free as one write of
// the group committer: one transaction, one commit (shared with whatever
// other writes join the batch), so a batch submission costs one fsync. The
// primary key decides each row as in CreateIntent; a taken intentId, also
// one taken by an earlier intent of the same call, is read back inside the
// transaction and returned unjudged. Any failure fails the whole write, so
// nothing of the call is stored.
func (s *intentStore) CreateIntents(ctx context.Context, intents []core.Intent) ([]ports.CreateIntentResult, error) {
	rows := make([]sqlitedb.InsertIntentParams, len(intents))
	for i, intent := range intents {
		if intent.NextDueAt.IsZero() {
			return nil, fmt.Errorf("sqlite: create intents: %q: a pending intent needs NextDueAt", intent.IntentID)
		}
		contract, err := json.Marshal(intent.Contract)
		if err != nil {
			return nil, fmt.Errorf("sqlite: create intents: %q: encoding contract: %w", intent.IntentID, err)
		}
		rows[i] = sqlitedb.InsertIntentParams{
			IntentID:         intent.IntentID,
			SubmissionTarget: intent.SubmissionTarget,
			Payload:          intent.Payload,
			Contract:         string(contract),
			GatewayType:      string(intent.Contract.GatewayType),
			Mode:             string(intent.Contract.Mode),
			CreatedAt:        nanos(intent.CreatedAt),
			NextDueAt:        nullNanos(intent.NextDueAt),
		}
	}
	out := make([]ports.CreateIntentResult, len(intents))
	err := s.db.write(ctx, "create intents", func(ctx context.Context, q *writeTx) error {
		for i := range rows {
			stamp, err := q.Stamp(ctx)
			if err != nil {
				return err
			}
			rows[i].LastModifiedAt = stamp
			inserted, err := q.InsertIntent(ctx, rows[i])
			if err != nil {
				return err
			}
			if inserted == 1 {
				out[i] = ports.CreateIntentResult{Intent: createdIntent(intents[i], rows[i]), Created: true}
				continue
			}
			// Taken before the call or earlier in it: this transaction sees
			// the row that holds the intentId.
			existing, err := loadIntent(ctx, q.Queries, rows[i].IntentID)
			if err != nil {
				return err
			}
			out[i] = ports.CreateIntentResult{Intent: existing}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// createdIntent is what a later read of a just inserted row returns: UTC
// times without a monotonic reading, pending, no attempts yet.
func createdIntent(intent core.Intent, row sqlitedb.InsertIntentParams) core.Intent {
	created := intent
	created.CreatedAt = fromNanos(row.CreatedAt)
	created.NextDueAt = fromNullNanos(row.NextDueAt)
	created.Status = core.StatusPending
	created.Contract = intent.Contract.Clone()
	created.AttemptCount = 0
	created.Attempts = nil
	created.FinalOutcome = nil
	created.ExhaustedReason = ""
	created.LastModifiedAt = fromNanos(row.LastModifiedAt)
	return created
}

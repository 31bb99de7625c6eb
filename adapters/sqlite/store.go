package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// store is ports.Store on a DB.
type store struct{ db *DB }

var _ ports.Store = (*store)(nil)

// Facts: one writer commits in the order of the change markers it stamps,
// so the leader's refresh never needs to look back.
func (s *store) Facts() ports.StoreFacts { return ports.StoreFacts{} }

// CreateIntent inserts the intent unless its intentId exists; the primary
// key decides, inside the write transaction, so concurrent creators of one
// intentId (in this process or another) yield one row.
func (s *store) CreateIntent(ctx context.Context, intent core.Intent) (ports.CreateIntentResult, error) {
	if intent.NextDueAt.IsZero() {
		return ports.CreateIntentResult{}, fmt.Errorf("sqlite: create intent %q: a pending intent needs NextDueAt", intent.IntentID)
	}
	params, err := insertIntentParams(intent)
	if err != nil {
		return ports.CreateIntentResult{}, err
	}
	var res ports.CreateIntentResult
	err = s.db.writeSingle(ctx, "create intent", func(ctx context.Context, q *writeTx) error {
		row, inserted, err := q.insertIntent(ctx, params)
		if err != nil {
			return err
		}
		if inserted == 1 {
			res = ports.CreateIntentResult{Intent: createdIntent(intent, row), Created: true}
			return nil
		}
		// The intentId exists: this transaction sees the row that won.
		existing, err := readIntent(ctx, q.Queries, intent.IntentID)
		if err != nil {
			return err
		}
		res = ports.CreateIntentResult{Intent: existing}
		return nil
	})
	return res, err
}

// GetIntent reads the intent and its attempts from one snapshot.
func (s *store) GetIntent(ctx context.Context, intentID string) (core.Intent, error) {
	var in core.Intent
	err := s.db.read(ctx, "get intent", func(ctx context.Context, q *sqlitedb.Queries) error {
		var err error
		in, err = readIntent(ctx, q, intentID)
		return err
	})
	return in, err
}

// readIntent reads an intent with its attempts in order through q.
func readIntent(ctx context.Context, q *sqlitedb.Queries, intentID string) (core.Intent, error) {
	row, err := q.GetIntent(ctx, intentID)
	if noRows(err) {
		return core.Intent{}, core.ErrIntentNotFound
	}
	if err != nil {
		return core.Intent{}, err
	}
	in, err := intentFromRow(row)
	if err != nil {
		return core.Intent{}, err
	}
	attempts, err := q.ListAttempts(ctx, intentID)
	if err != nil {
		return core.Intent{}, err
	}
	in.Attempts = attemptsFromRows(attempts)
	return in, nil
}

// ListIntents reads at most p.Limit intents that match the filters,
// strictly after p.Before (or the nearest before p.After), newest first,
// with their attempts, from one snapshot; the service cuts pages. The
// query is listing.go's.
func (s *store) ListIntents(ctx context.Context, p ports.ListIntentsParams) ([]core.Intent, error) {
	return s.listIntents(ctx, p)
}

// intentsWithAttempts converts a page of rows and attaches every intent's
// attempts, read with one query for the whole page.
func intentsWithAttempts(ctx context.Context, q *sqlitedb.Queries, rows []sqlitedb.SubmissionIntent) ([]core.Intent, error) {
	intents := make([]core.Intent, len(rows))
	if len(rows) == 0 {
		return intents, nil
	}
	ids := make([]string, len(rows))
	byID := make(map[string]int, len(rows))
	for i, r := range rows {
		in, err := intentFromRow(r)
		if err != nil {
			return nil, err
		}
		intents[i] = in
		ids[i] = r.IntentID
		byID[r.IntentID] = i
	}
	attempts, err := q.ListAttemptsOfIntents(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, a := range attempts {
		i := byID[a.IntentID]
		intents[i].Attempts = append(intents[i].Attempts, attemptFromRow(a))
	}
	return intents, nil
}

// insertIntentParams builds the insert of a new intent; the writer adds the
// change marker it stamps.
func insertIntentParams(intent core.Intent) (sqlitedb.InsertIntentParams, error) {
	contract, err := json.Marshal(intent.Contract)
	if err != nil {
		return sqlitedb.InsertIntentParams{}, fmt.Errorf("sqlite: create intent %q: encoding contract: %w", intent.IntentID, err)
	}
	return sqlitedb.InsertIntentParams{
		IntentID:         intent.IntentID,
		SubmissionTarget: intent.SubmissionTarget,
		Payload:          intent.Payload,
		Contract:         string(contract),
		GatewayType:      string(intent.Contract.GatewayType),
		Mode:             string(intent.Contract.Mode),
		CreatedAt:        nanos(intent.CreatedAt),
		NextDueAt:        nullNanos(intent.NextDueAt),
		NotBefore:        nullNanos(intent.NotBefore),
		TraceParent:      nullString(intent.TraceParent),
	}, nil
}

// GetIntents reads the stored intents among intentIDs with their attempts,
// from one snapshot, with one query for the intents and one for their
// attempts.
func (s *store) GetIntents(ctx context.Context, intentIDs []string) ([]core.Intent, error) {
	if len(intentIDs) == 0 {
		return nil, nil
	}
	idsJSON, err := json.Marshal(intentIDs)
	if err != nil {
		return nil, fmt.Errorf("sqlite: get intents: encoding intent ids: %w", err)
	}
	var intents []core.Intent
	err = s.db.read(ctx, "get intents", func(ctx context.Context, q *sqlitedb.Queries) error {
		rows, err := q.GetIntentsOf(ctx, string(idsJSON))
		if err != nil {
			return err
		}
		intents = make([]core.Intent, len(rows))
		byID := make(map[string]int, len(rows))
		for i, r := range rows {
			if intents[i], err = intentFromRow(r); err != nil {
				return err
			}
			byID[r.IntentID] = i
		}
		if len(rows) == 0 {
			return nil
		}
		attempts, err := q.ListAttemptsOfJSON(ctx, string(idsJSON))
		if err != nil {
			return err
		}
		for _, a := range attempts {
			if i, ok := byID[a.IntentID]; ok {
				intents[i].Attempts = append(intents[i].Attempts, attemptFromRow(a))
			}
		}
		return nil
	})
	return intents, err
}

// insertIntent inserts a new intent unless its intentId exists, stamped
// with this transaction's change marker; it returns the row as written and
// how many rows it inserted (0 when the id was taken).
func (q *writeTx) insertIntent(ctx context.Context, params sqlitedb.InsertIntentParams) (sqlitedb.InsertIntentParams, int64, error) {
	stamp, err := q.Stamp(ctx)
	if err != nil {
		return params, 0, err
	}
	params.LastModifiedAt = stamp
	inserted, err := q.InsertIntent(ctx, params)
	return params, inserted, err
}

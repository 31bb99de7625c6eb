package sqlserver

import (
	"time"

	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// store implements ports.Store over one SQL Server database.
type store struct {
	db *DB
}

var _ ports.Store = (*store)(nil)

// changeLookback is how far behind its cursor the leader re-reads changes on
// SQL Server, whose concurrent transactions may commit out of
// last_modified_at order (a write whose timestamp was taken before a refresh
// passed it, committing after). It must exceed the longest such gap: lock
// waits of a contended write, deadlock retries.
const changeLookback = 5 * time.Second

// Facts states the look-back that concurrent writers make necessary.
func (s *store) Facts() ports.StoreFacts { return ports.StoreFacts{ChangeLookback: changeLookback} }

// maxKeyLen is the nvarchar length of intent_id and submission_target.
const maxKeyLen = 255

// createAttempts bounds the insert-or-read loop of CreateIntent. A
// duplicate key is only reported once the winning row is committed and rows
// are never deleted, so the second round practically never happens.
const createAttempts = 3

// CreateIntent inserts the intent, and when the primary key says another
// request (on any instance) created it first, reads that row and returns it
// for the service to judge. It never reads before writing, so two concurrent
// creates of one intentId cannot both insert.
func (s *store) CreateIntent(ctx context.Context, intent core.Intent) (ports.CreateIntentResult, error) {
	params, err := insertIntentParams(intent)
	if err != nil {
		return ports.CreateIntentResult{}, err
	}
	for range createAttempts {
		created, err := s.insertIntent(ctx, params)
		if err == nil {
			return ports.CreateIntentResult{Intent: created, Created: true}, nil
		}
		if !errors.Is(err, errDuplicateKey) {
			return ports.CreateIntentResult{}, err
		}
		existing, found, err := s.readIntent(ctx, s.db.q, intent.IntentID)
		if err != nil {
			return ports.CreateIntentResult{}, err
		}
		if !found {
			continue
		}
		if existing.IntentID != intent.IntentID {
			// SQL Server compares strings as if padded with spaces, so the
			// key "a " collides with "a". Refusing is the only honest answer.
			return ports.CreateIntentResult{}, &core.FieldError{Field: "intentId",
				Message: fmt.Sprintf("collides with the existing intentId %q: SQL Server compares identifiers ignoring trailing spaces", existing.IntentID)}
		}
		return ports.CreateIntentResult{Intent: existing, Created: false}, nil
	}
	return ports.CreateIntentResult{}, fmt.Errorf("%w: intent %q: duplicate key reported but no row found", core.ErrStoreUnavailable, intent.IntentID)
}

// insertIntentParams checks what the schema would refuse with a less useful
// error and builds the insert's parameters.
func insertIntentParams(intent core.Intent) (sqlserverdb.InsertIntentParams, error) {
	switch {
	case intent.IntentID == "":
		return sqlserverdb.InsertIntentParams{}, &core.FieldError{Field: "intentId", Message: "is required"}
	case nvarcharLen(intent.IntentID) > maxKeyLen:
		return sqlserverdb.InsertIntentParams{}, &core.FieldError{Field: "intentId", Message: fmt.Sprintf("is longer than %d characters", maxKeyLen)}
	case nvarcharLen(intent.SubmissionTarget) > maxKeyLen:
		return sqlserverdb.InsertIntentParams{}, &core.FieldError{Field: "submissionTarget", Message: fmt.Sprintf("is longer than %d characters", maxKeyLen)}
	case len(intent.Payload) == 0:
		return sqlserverdb.InsertIntentParams{}, &core.FieldError{Field: "payload", Message: "is required"}
	case intent.NextDueAt.IsZero():
		return sqlserverdb.InsertIntentParams{}, fmt.Errorf("sqlserver: create intent %q: a pending intent needs NextDueAt", intent.IntentID)
	case len(intent.TraceParent) > core.TraceParentLength:
		// The column holds the version-00 form the service keeps
		// (core.NormalizeTraceParent); anything longer is a caller's bug.
		return sqlserverdb.InsertIntentParams{}, fmt.Errorf("sqlserver: create intent %q: TraceParent %q is not a version-00 traceparent", intent.IntentID, intent.TraceParent)
	case intent.Status != core.StatusPending || intent.AttemptCount != 0 || intent.CreatedAt.IsZero():
		return sqlserverdb.InsertIntentParams{}, fmt.Errorf("sqlserver: CreateIntent needs a new pending intent (status %q, %d attempts, created %v)",
			intent.Status, intent.AttemptCount, intent.CreatedAt)
	}
	contract, err := json.Marshal(intent.Contract.Clone())
	if err != nil {
		return sqlserverdb.InsertIntentParams{}, fmt.Errorf("sqlserver: encode contract snapshot: %w", err)
	}
	return sqlserverdb.InsertIntentParams{
		IntentID:         intent.IntentID,
		SubmissionTarget: intent.SubmissionTarget,
		Payload:          intent.Payload,
		Contract:         string(contract),
		GatewayType:      string(intent.Contract.GatewayType),
		Mode:             string(intent.Contract.Mode),
		CreatedAt:        dbTime(intent.CreatedAt),
		NextDueAt:        dbTime(intent.NextDueAt),
		NotBefore:        nullTime(intent.NotBefore),
		TraceParent:      sql.NullString{String: intent.TraceParent, Valid: intent.TraceParent != ""},
	}, nil
}

// insertIntent inserts the row and reads it back in the same transaction,
// so the caller gets the stored times (datetime2 precision, database-time
// last_modified_at) and not the ones it passed in.
func (s *store) insertIntent(ctx context.Context, params sqlserverdb.InsertIntentParams) (core.Intent, error) {
	var created core.Intent
	err := s.db.inTx(ctx, sql.LevelReadCommitted, func(q *sqlserverdb.Queries) error {
		if err := q.InsertIntent(ctx, params); err != nil {
			return mapError(err)
		}
		row, err := q.GetIntent(ctx, params.IntentID)
		if err != nil {
			return mapError(err)
		}
		created, err = intentFromRow(row)
		return err
	})
	return created, err
}

// GetIntent returns the intent with its attempts, or core.ErrIntentNotFound.
func (s *store) GetIntent(ctx context.Context, intentID string) (core.Intent, error) {
	intent, found, err := s.readIntent(ctx, s.db.q, intentID)
	if err != nil {
		return core.Intent{}, err
	}
	// The equality check also refuses the row "a" when asked for "a ",
	// which SQL Server's padded comparison would otherwise return.
	if !found || intent.IntentID != intentID {
		return core.Intent{}, core.ErrIntentNotFound
	}
	return intent, nil
}

// readIntent reads the row whose key SQL Server finds equal to intentID,
// then its attempts.
func (s *store) readIntent(ctx context.Context, q *sqlserverdb.Queries, intentID string) (core.Intent, bool, error) {
	row, err := q.GetIntent(ctx, intentID)
	if errors.Is(err, sql.ErrNoRows) {
		return core.Intent{}, false, nil
	}
	if err != nil {
		return core.Intent{}, false, mapError(err)
	}
	intent, err := intentFromRow(row)
	if err != nil {
		return core.Intent{}, false, err
	}
	attempts, err := q.ListAttempts(ctx, intentID)
	if err != nil {
		return core.Intent{}, false, mapError(err)
	}
	intent, err = readFlags(ctx, q, withAttempts(intent, attempts))
	if err != nil {
		return core.Intent{}, false, err
	}
	return intent, true, nil
}

// GetIntents reads the stored intents among intentIDs, then their attempts,
// each with one round trip whatever the number of intents, as GetIntent
// reads one. Rows whose key SQL Server only finds equal (trailing spaces)
// are left out, as GetIntent refuses them.
func (s *store) GetIntents(ctx context.Context, intentIDs []string) ([]core.Intent, error) {
	if len(intentIDs) == 0 {
		return nil, nil
	}
	read, err := s.db.intentsOf(ctx, intentIDs)
	if err != nil {
		return nil, err
	}
	asked := make(map[string]bool, len(intentIDs))
	for _, id := range intentIDs {
		asked[id] = true
	}
	intents := make([]core.Intent, 0, len(read))
	for _, intent := range read {
		if asked[intent.IntentID] {
			intents = append(intents, intent)
		}
	}
	if err := s.attachDetails(ctx, intents); err != nil {
		return nil, err
	}
	return intents, nil
}

// attachDetails completes intents read as rows: the attempts of all of them
// in one round trip, then the facts kept beside their status (see
// attachFlags). Every read of many intents goes through it, or reads the
// facts in its own statement (the listing), so none returns an intent
// without its facts.
func (s *store) attachDetails(ctx context.Context, intents []core.Intent) error {
	if err := s.attachAttempts(ctx, intents); err != nil {
		return err
	}
	return s.db.attachFlags(ctx, intents)
}

// attachAttempts sets the attempts of all the intents, read in one round
// trip.
func (s *store) attachAttempts(ctx context.Context, intents []core.Intent) error {
	if len(intents) == 0 {
		return nil
	}
	ids := make([]string, len(intents))
	for i, intent := range intents {
		ids[i] = intent.IntentID
	}
	byIntent, err := s.db.attemptsOf(ctx, ids)
	if err != nil {
		return err
	}
	for i := range intents {
		intents[i] = withAttempts(intents[i], byIntent[intents[i].IntentID])
	}
	return nil
}

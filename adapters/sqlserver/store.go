package sqlserver

import (
	"time"

	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// store implements ports.Store over one SQL Server database.
type store struct {
	db *DB
	// pool is the connection pool the store's calls go through, and q the
	// queries bound to it: the query pool for Store, the executor's for
	// ExecutorStore. The executor's reservations, results and reads of due
	// intents are its own wherever they are called from (attempts_batch.go,
	// idlist.go).
	pool *sql.DB
	q    *sqlserverdb.Queries
}

var _ ports.Store = (*store)(nil)

// changeLookback is how far behind its cursor the leader re-reads changes on
// SQL Server, whose concurrent transactions may commit out of
// last_modified_at order (a write whose timestamp was taken before a refresh
// passed it, committing after). It must exceed the longest such gap: lock
// waits of a contended write, deadlock retries.
const changeLookback = 5 * time.Second

// writeBatches is how many fenced batches of one kind the executor keeps
// under way: one. Every call pays a fixed cost that dwarfs its rows' (a
// round trip and a log flush on SQL Server; on Babelfish about 2 ms of
// server CPU to enter the procedure and plan its statements, against
// tenths of a millisecond per item), so one call under way, gathering
// everything that arrives meanwhile, makes the batches as large as the
// load allows. Draining a backlog of 10,000 intents on Babelfish, one
// batch under way executed 1,001-1,007 attempts/s, two 872-949 and four
// 604-625, alternated in two rounds (docs/sqlserver.md). The two writers
// this leaves take the lease lock in turn, which lost Babelfish 4.2 the
// lock's name until the lease lock's pin (lease_pin.go) kept it.
const writeBatches = 1

// Facts states the look-back that concurrent writers make necessary and
// the batches under way that the cost of a call makes best.
func (s *store) Facts() ports.StoreFacts {
	return ports.StoreFacts{ChangeLookback: changeLookback, WriteBatches: writeBatches}
}

// maxKeyLen is the nvarchar length of intent_id and submission_target.
const maxKeyLen = 255

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

// GetIntents reads the stored intents among intentIDs with their attempts
// and flags, in one round trip. Rows whose key SQL Server only finds
// equal (trailing spaces) are left out, as GetIntent refuses them.
func (s *store) GetIntents(ctx context.Context, intentIDs []string) ([]core.Intent, error) {
	if len(intentIDs) == 0 {
		return nil, nil
	}
	read, err := s.db.intentsWithDetails(ctx, intentIDs)
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
	return intents, nil
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

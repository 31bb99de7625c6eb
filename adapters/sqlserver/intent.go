package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// One intent, one request. A submission is the service's hottest path, and
// on SQL Server its cost is round trips (each a network exchange and, for
// a write, a log flush), so CreateIntent's insert, idempotency check and
// read-back are one call of a stored procedure, and GetIntent reads the
// intent with its attempts and facts the same way (migration 00015). They
// are procedures rather than batches of text because Babelfish parses a
// request's text at every execution, and as a 1.5 kB batch a submission
// cost it more to parse than to run: with 64 clients on the store bench,
// back to back, the procedures ran CreateIntent at 2.0 to 2.2 times the
// batch's rate (330-460 to 690-970 intents/s) and GetIntent at 1.7 to 2.4
// times (990-1,410 to 2,140-2,600 reads/s).

// createIntentSQL calls dbo.submission_create_intent, which inserts the
// intent unless its intentId is stored and reads the stored row with its
// facts, then its attempts: up to three result sets, the first (one
// column, a row when this call inserted the intent) from the insert's
// OUTPUT. NOT EXISTS makes the common repeat write nothing and raise
// nothing; two sessions that both pass it for one intentId (READ
// COMMITTED lets both, and under READ_COMMITTED_SNAPSHOT or on Babelfish
// neither sees the other's uncommitted row) meet at the primary key, whose
// 2627 (2601 for a unique index) the procedure's CATCH takes as "another
// session won"; its read, a new statement, then sees the winner's
// committed row. Any other error is thrown again. The insert runs in
// autocommit: one row, one statement, atomic without a transaction. The
// intentId ($1) is sent as nvarchar(max), so that the request's
// declaration never varies with its length, and becomes the procedure's
// nvarchar(255), which yields to the key column's binary collation; the
// traceparent ($10) is empty for none, which the procedure stores as NULL.
// TestHandWrittenSQLIsTSQL parses the call, TestMigrationsAreTSQL the
// procedure, TestIntakeProceduresAnswerTheReadColumns holds its result
// sets to the columns read here, and
// TestCreateIntentWhileAnotherSessionInsertsIt plays the race.
const createIntentSQL = `EXEC dbo.submission_create_intent @intent_id = $1, @submission_target = $2,
    @payload = $3, @contract = $4, @gateway_type = $5, @mode = $6, @created_at = $7,
    @next_due_at = $8, @not_before = $9, @trace_parent = $10`

// getIntentSQL calls dbo.submission_get_intent, which reads the intent
// whose key SQL Server finds equal to $1 with its facts, then its
// attempts: readDetailedIntents' two result sets.
const getIntentSQL = `EXEC dbo.submission_get_intent @intent_id = $1`

// maxCreateRounds bounds CreateIntent's requests. A request finds no row
// only if the intentId's row vanished between its insert and its read,
// which nothing in the service does; one more round answers even then.
const maxCreateRounds = 2

// CreateIntent stores a new intent, or returns the intent stored under its
// intentId (with its attempts and flag) for the service to judge, in one
// round trip.
func (s *store) CreateIntent(ctx context.Context, intent core.Intent) (ports.CreateIntentResult, error) {
	params, err := insertIntentParams(intent)
	if err != nil {
		return ports.CreateIntentResult{}, err
	}
	for range maxCreateRounds {
		created, stored, found, err := s.createIntent(ctx, params)
		if created {
			s.db.stats.wrote(1)
		}
		switch {
		case err != nil:
			return ports.CreateIntentResult{}, err
		case !found:
			continue
		case stored.IntentID != intent.IntentID:
			// SQL Server compares strings as if padded with spaces, so the
			// key "a " collides with "a". Refusing is the only honest answer.
			return ports.CreateIntentResult{}, &core.FieldError{Field: "intentId",
				Message: fmt.Sprintf("collides with the existing intentId %q: SQL Server compares identifiers ignoring trailing spaces", stored.IntentID)}
		}
		return ports.CreateIntentResult{Intent: stored, Created: created}, nil
	}
	return ports.CreateIntentResult{}, fmt.Errorf("%w: intent %q: neither inserted nor found", core.ErrStoreUnavailable, intent.IntentID)
}

// createIntent runs createIntentSQL once.
func (s *store) createIntent(ctx context.Context, p sqlserverdb.InsertIntentParams) (created bool, stored core.Intent, found bool, err error) {
	return createIntentOn(ctx, s.pool, p)
}

// createIntentOn runs createIntentSQL once on q.
func createIntentOn(ctx context.Context, q querier, p sqlserverdb.InsertIntentParams) (created bool, stored core.Intent, found bool, err error) {
	rows, err := q.QueryContext(ctx, createIntentSQL,
		setString(p.IntentID), setString(p.SubmissionTarget), p.Payload, setString(p.Contract),
		setString(p.GatewayType), setString(p.Mode), p.CreatedAt, p.NextDueAt, p.NotBefore, setString(p.TraceParent.String))
	if err != nil {
		return false, core.Intent{}, false, mapError(err)
	}
	defer rows.Close()
	// The insert's OUTPUT comes first, one column, a row when this request
	// inserted the intent; an insert that lost the race may have ended
	// before sending it, so the result sets are told apart by their
	// columns. go-mssqldb moves to the next result set only once Next has
	// read past the current one's last row.
	cols, err := rows.Columns()
	if err != nil {
		return false, core.Intent{}, false, mapError(err)
	}
	if len(cols) == 1 {
		for rows.Next() {
			created = true
		}
		if !rows.NextResultSet() {
			return false, core.Intent{}, false, mapError(errors.Join(rows.Err(), errors.New("sqlserver: create intent returned no read-back")))
		}
	}
	intents, err := readDetailedIntents(rows)
	if err != nil {
		return false, core.Intent{}, false, mapError(err)
	}
	if len(intents) == 0 {
		return false, core.Intent{}, false, nil
	}
	return created, intents[0], true, nil
}

// GetIntent returns the intent with its attempts, or core.ErrIntentNotFound,
// in one round trip.
func (s *store) GetIntent(ctx context.Context, intentID string) (core.Intent, error) {
	rows, err := s.pool.QueryContext(ctx, getIntentSQL, setString(intentID))
	if err != nil {
		return core.Intent{}, mapError(err)
	}
	defer rows.Close()
	intents, err := readDetailedIntents(rows)
	if err != nil {
		return core.Intent{}, mapError(err)
	}
	// The equality check also refuses the row "a" when asked for "a ",
	// which SQL Server's padded comparison would otherwise return.
	if len(intents) == 0 || intents[0].IntentID != intentID {
		return core.Intent{}, core.ErrIntentNotFound
	}
	return intents[0], nil
}

// readIntent reads the row whose key SQL Server finds equal to intentID,
// then its attempts and flag, through q (a transaction's, in a
// resubmission).
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

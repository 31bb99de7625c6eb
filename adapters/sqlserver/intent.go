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
// a write, a log flush), so CreateIntent sends its insert, its idempotency
// check and its read-back as one T-SQL batch, and GetIntent reads the
// intent with its attempts and flag the same way.

// createIntentSQL inserts the intent unless its intentId is stored, then
// reads the stored row with its flag, and its attempts: up to three result
// sets. The insert's OUTPUT names the row when this request inserted it.
// NOT EXISTS makes the common repeat (an intentId stored long ago) write
// nothing and raise nothing. Two sessions can pass NOT EXISTS at once for
// one intentId: READ COMMITTED lets both, and under READ_COMMITTED_SNAPSHOT
// or on Babelfish neither sees the other's uncommitted row. The primary key
// then fails the later insert with 2627 (2601 for a unique index) once the
// first has committed; the CATCH takes that as "another session won", and
// the read-back that follows, a new statement, sees the winner's committed
// row. Any other error is thrown again. The insert runs in autocommit: one
// row, one statement, atomic without a transaction. The batch is kept to
// three statements with no variables: on Babelfish each statement, not
// each round trip, is most of the cost (a DECLARE, an IF and a SELECT of
// the flag cost more than the round trips they saved, measured with 16
// clients). $1 (the intentId, sent as nvarchar(max) so that the
// statement's declaration never varies with its length) is cast to the
// key column's type wherever it meets the key, whose binary collation
// wins; the traceparent ($10) travels the same way, empty for none, which
// the insert stores as NULL. Hand-written because sqlc parses neither TRY/CATCH nor OUTPUT nor
// several statements; TestHandWrittenSQLIsTSQL parses it, and
// TestCreateIntentWhileAnotherSessionInsertsIt plays the race.
var createIntentSQL = `BEGIN TRY
    INSERT INTO submission_intents (
        intent_id, submission_target, payload, contract, gateway_type, mode,
        status, created_at, next_due_at, attempt_count, last_modified_at, not_before, trace_parent)
    OUTPUT inserted.intent_id
    SELECT CAST($1 AS nvarchar(255)), CAST($2 AS nvarchar(255)), $3, CAST($4 AS nvarchar(max)),
        CAST($5 AS varchar(16)), CAST($6 AS varchar(16)), 'pending',
        CAST($7 AS datetime2(7)), CAST($8 AS datetime2(7)), 0, SYSUTCDATETIME(), CAST($9 AS datetime2(7)),
        NULLIF(CAST($10 AS varchar(55)), '')
    WHERE NOT EXISTS (SELECT 1 FROM submission_intents AS s WHERE s.intent_id = CAST($1 AS nvarchar(255)));
END TRY
BEGIN CATCH
    IF ERROR_NUMBER() NOT IN (2627, 2601) THROW;
END CATCH;
SELECT ` + detailedIntentColumns + `
FROM submission_intents
WHERE intent_id = CAST($1 AS nvarchar(255));
` + attemptsOfSQL("intent_id = CAST($1 AS nvarchar(255))")

// getIntentSQL reads the intent whose key SQL Server finds equal to $1
// with its flag, then its attempts: readDetailedIntents' two result sets.
var getIntentSQL = `SELECT ` + detailedIntentColumns + `
FROM submission_intents
WHERE intent_id = CAST($1 AS nvarchar(255));
` + attemptsOfSQL("intent_id = CAST($1 AS nvarchar(255))")

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
	rows, err := s.db.queries.QueryContext(ctx, createIntentSQL,
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
	rows, err := s.db.queries.QueryContext(ctx, getIntentSQL, setString(intentID))
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

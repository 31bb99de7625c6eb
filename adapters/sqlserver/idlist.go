package sqlserver

import (
	"context"
	"database/sql"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
)

// The reads of many intents at once (GetIntents, the attempts and flags of
// a listing page, resubmission links, a batch's read-back) name their
// intentIds as a VALUES table of parameters (see values.go), split into
// requests of at most rowsPerRequest(1) ids. sqlc cannot generate a
// statement whose parameter count varies, so these are written here;
// TestHandWrittenSQLIsTSQL parses each of them.

// intentIDColumn is the one column of an intentId list.
var intentIDColumn = []valuesColumn{{"intent_id", "nvarchar(255)"}}

// inIntentIDs is the predicate "column is one of the n listed intentIds",
// whose parameters are every width-th from $1. The list's values have the
// database's default collation; the COLLATE gives them the key columns',
// or comparing them fails with Msg 468 (collation conflict) on a database
// whose default is not Latin1_General_100_BIN2.
func inIntentIDs(column string, n, width int) string {
	return column + " IN (\n    SELECT ids.intent_id COLLATE Latin1_General_100_BIN2 FROM " +
		valuesTable("ids", intentIDColumn, n, width) + ")"
}

// intentColumns are the columns of intentRow, in its field order.
const intentColumns = `intent_id, submission_target, payload, contract, status, created_at,
       next_due_at, attempt_count, final_outcome_status, final_outcome_reason,
       final_message_id, exhausted_reason, last_modified_at, not_before, trace_parent`

// intentRowFields are the scan destinations of intentColumns in r, the one
// place that pairs the columns with intentRow's fields.
func intentRowFields(r *intentRow) []any {
	return []any{&r.IntentID, &r.SubmissionTarget, &r.Payload, &r.Contract, &r.Status, &r.CreatedAt,
		&r.NextDueAt, &r.AttemptCount, &r.FinalOutcomeStatus, &r.FinalOutcomeReason,
		&r.FinalMessageID, &r.ExhaustedReason, &r.LastModifiedAt, &r.NotBefore, &r.TraceParent}
}

// scanIntentRow reads one row of intentColumns.
func scanIntentRow(rows *sql.Rows) (intentRow, error) {
	var r intentRow
	err := rows.Scan(intentRowFields(&r)...)
	return r, err
}

// intentsOfSQL reads the intents among n listed intentIds.
func intentsOfSQL(n int) string {
	return "SELECT " + intentColumns + "\nFROM submission_intents\nWHERE " + inIntentIDs("intent_id", n, 1)
}

// attemptsOfSQL reads the attempts of n listed intents, each intent's in
// order.
func attemptsOfSQL(n int) string {
	return `SELECT intent_id, attempt_number, started_at, finished_at, outcome_status,
       outcome_reason, message_id, error, sent, holder_id, lease_epoch
FROM submission_attempts
WHERE ` + inIntentIDs("intent_id", n, 1) + `
ORDER BY intent_id, attempt_number`
}

// intentFlagsOfSQL reads the facts of those of n listed intents that have
// any: possibly accepted (migration 00007), accepted after the deadline
// with its message id (migration 00011).
func intentFlagsOfSQL(n int) string {
	return "SELECT intent_id, possibly_accepted, accepted_after_deadline, accepted_message_id FROM submission_intents\n" +
		"WHERE (possibly_accepted = 1 OR accepted_after_deadline = 1)\n  AND " + inIntentIDs("intent_id", n, 1)
}

// resubmissionLinksSQL reads the links of n listed intents from either end.
func resubmissionLinksSQL(n int) string {
	return "SELECT intent_id, resubmitted_as FROM submission_resubmissions\nWHERE " +
		inIntentIDs("intent_id", n, 1) + "\n   OR " + inIntentIDs("resubmitted_as", n, 1)
}

// queryIntentIDs runs the statement sqlFor writes once per request's worth
// of intentIds (padded with NULLs, which match nothing) and hands every
// row to scan.
func queryIntentIDs(ctx context.Context, db *sql.DB, ids []string, sqlFor func(n int) string, scan func(*sql.Rows) error) error {
	for _, c := range chunks(len(ids), rowsPerRequest(1)) {
		n := paddedRows(c[1]-c[0], 1)
		args := make([]any, 0, n)
		for _, id := range ids[c[0]:c[1]] {
			args = append(args, setString(id))
		}
		rows, err := db.QueryContext(ctx, sqlFor(n), padParams(args, n, 1)...)
		if err != nil {
			return mapError(err)
		}
		for rows.Next() {
			if err := scan(rows); err != nil {
				rows.Close()
				return mapError(err)
			}
		}
		if err := rows.Close(); err != nil {
			return mapError(err)
		}
		if err := rows.Err(); err != nil {
			return mapError(err)
		}
	}
	return nil
}

// intentsOf reads the stored intents among ids (without attempts).
func (db *DB) intentsOf(ctx context.Context, ids []string) ([]core.Intent, error) {
	var out []core.Intent
	err := queryIntentIDs(ctx, db.queries, ids, intentsOfSQL, func(rows *sql.Rows) error {
		r, err := scanIntentRow(rows)
		if err != nil {
			return err
		}
		in, err := intentFromRow(r)
		out = append(out, in)
		return err
	})
	return out, err
}

// attemptsOf reads the attempts of the intents ids, by intentId.
func (db *DB) attemptsOf(ctx context.Context, ids []string) (map[string][]attemptRow, error) {
	out := make(map[string][]attemptRow, len(ids))
	err := queryIntentIDs(ctx, db.queries, ids, attemptsOfSQL, func(rows *sql.Rows) error {
		var id string
		var r attemptRow
		if err := rows.Scan(&id, &r.AttemptNumber, &r.StartedAt, &r.FinishedAt, &r.OutcomeStatus,
			&r.OutcomeReason, &r.MessageID, &r.Error, &r.Sent, &r.HolderID, &r.LeaseEpoch); err != nil {
			return err
		}
		out[id] = append(out[id], r)
		return nil
	})
	return out, err
}

// intentFlagsOf reads the facts of those of the intents ids that have any.
func (db *DB) intentFlagsOf(ctx context.Context, ids []string) (map[string]sqlserverdb.IntentFlagsRow, error) {
	out := make(map[string]sqlserverdb.IntentFlagsRow)
	err := queryIntentIDs(ctx, db.queries, ids, intentFlagsOfSQL, func(rows *sql.Rows) error {
		var id string
		var f sqlserverdb.IntentFlagsRow
		err := rows.Scan(&id, &f.PossiblyAccepted, &f.AcceptedAfterDeadline, &f.AcceptedMessageID)
		out[id] = f
		return err
	})
	return out, err
}

// resubmissionLinksOf reads the links (original, resubmission) touching
// the intents ids.
func (db *DB) resubmissionLinksOf(ctx context.Context, ids []string) ([][2]string, error) {
	var out [][2]string
	err := queryIntentIDs(ctx, db.queries, ids, resubmissionLinksSQL, func(rows *sql.Rows) error {
		var link [2]string
		err := rows.Scan(&link[0], &link[1])
		out = append(out, link)
		return err
	})
	return out, err
}

package sqlserver

import (
	"context"
	"database/sql"

	"github.com/submissionmanager/submission-manager/core"
)

// The reads of many intents at once (GetIntents, the attempts and flags of
// a listing page, resubmission links) name their intentIds as a VALUES
// table of parameters (see values.go), split into requests of at most
// rowsPerRequest(1) ids. sqlc cannot generate a statement whose parameter
// count varies, so these are written here; TestHandWrittenSQLIsTSQL parses
// each of them. A statement that needs the list twice names the same
// parameters twice rather than copying them into a table variable, which
// Babelfish keeps as a temporary table written for every request.

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

// intentsWithDetailsSQL reads the intents among n listed intentIds with
// their flags, then their attempts: readDetailedIntents' two result sets.
func intentsWithDetailsSQL(n int) string {
	return "SELECT " + detailedIntentColumns + "\nFROM submission_intents\nWHERE " + inIntentIDs("intent_id", n, 1) + ";\n" +
		attemptsOfSQL(inIntentIDs("intent_id", n, 1))
}

// attemptsOfIDsSQL reads the attempts of n listed intents whose rows the
// caller has (a listing page, which reads the flags itself).
func attemptsOfIDsSQL(n int) string {
	return attemptsOfSQL(inIntentIDs("intent_id", n, 1))
}

// resubmissionLinksSQL reads the links of n listed intents from either end.
func resubmissionLinksSQL(n int) string {
	return "SELECT intent_id, resubmitted_as FROM submission_resubmissions\nWHERE " +
		inIntentIDs("intent_id", n, 1) + "\n   OR " + inIntentIDs("resubmitted_as", n, 1)
}

// queryIntentIDs runs the statements sqlFor writes once per request's worth
// of intentIds (padded with NULLs, which match nothing) and hands each
// request's result sets to read.
func queryIntentIDs(ctx context.Context, db *sql.DB, ids []string, sqlFor func(n int) string, read func(*sql.Rows) error) error {
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
		err = read(rows)
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = rows.Err()
		}
		if err != nil {
			return mapError(err)
		}
	}
	return nil
}

// eachRow reads one result set with scan.
func eachRow(scan func(*sql.Rows) error) func(*sql.Rows) error {
	return func(rows *sql.Rows) error {
		for rows.Next() {
			if err := scan(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}
}

// intentsWithDetails reads the stored intents among ids with their
// attempts and flags: one round trip per rowsPerRequest(1) ids.
func (db *DB) intentsWithDetails(ctx context.Context, ids []string) ([]core.Intent, error) {
	var out []core.Intent
	err := queryIntentIDs(ctx, db.queries, ids, intentsWithDetailsSQL, func(rows *sql.Rows) error {
		got, err := readDetailedIntents(rows)
		out = append(out, got...)
		return err
	})
	return out, err
}

// attemptsOf reads the attempts of the intents ids, by intentId.
func (db *DB) attemptsOf(ctx context.Context, ids []string) (map[string][]attemptRow, error) {
	byIntent := make(map[string][]attemptRow, len(ids))
	err := queryIntentIDs(ctx, db.queries, ids, attemptsOfIDsSQL, func(rows *sql.Rows) error {
		return readAttempts(rows, byIntent)
	})
	return byIntent, err
}

// resubmissionLinksOf reads the links (original, resubmission) touching
// the intents ids.
func (db *DB) resubmissionLinksOf(ctx context.Context, ids []string) ([][2]string, error) {
	var out [][2]string
	err := queryIntentIDs(ctx, db.queries, ids, resubmissionLinksSQL, eachRow(func(rows *sql.Rows) error {
		var link [2]string
		err := rows.Scan(&link[0], &link[1])
		out = append(out, link)
		return err
	}))
	return out, err
}

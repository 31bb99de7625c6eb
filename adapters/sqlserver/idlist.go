package sqlserver

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/submissionmanager/submission-manager/core"
)

// The reads of many intents at once name their intentIds in one of two
// ways. GetIntents and a listing page's attempts, the executor's and the
// console's hot reads, call a stored procedure (migration 00015) with the
// ids as one JSON array of strings spelled by jsonText (jsontext.go says
// why): one request of a few bytes per id whatever their number, where a
// VALUES table of parameters made Babelfish parse tens of kilobytes of
// text and bind a parameter per id at every call. The resubmission links,
// which the service reads beside a single intent, a listing page and a
// resubmission, still name them as a VALUES table of
// parameters (see values.go), split into requests of at most
// rowsPerRequest(1) ids; sqlc cannot generate a statement whose parameter
// count varies, so it is written here and TestHandWrittenSQLIsTSQL parses
// it. A statement that needs the list twice names the same parameters
// twice rather than copying them into a table variable, which Babelfish
// keeps as a temporary table written for every request.

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

// getIntentsSQL calls dbo.submission_get_intents, which reads the intents
// among the JSON array of intentIds $1 with their facts, then their
// attempts: readDetailedIntents' two result sets.
const getIntentsSQL = `EXEC dbo.submission_get_intents @ids = $1`

// attemptsOfIDsSQL calls dbo.submission_attempts_of, which reads the
// attempts of the intents among the JSON array of intentIds $1 (a listing
// page's, whose rows and facts the caller has).
const attemptsOfIDsSQL = `EXEC dbo.submission_attempts_of @ids = $1`

// intentIDsJSON is the JSON array of ids that submission_intent_ids reads:
// each spelled by jsonText, so that Babelfish's OPENJSON hands it back
// unescaped, and read back by the database function only when spelled.
func intentIDsJSON(ids []string) (string, error) {
	spelled := make([]string, len(ids))
	for i, id := range ids {
		spelled[i] = jsonText(id)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(spelled); err != nil {
		return "", fmt.Errorf("sqlserver: encode intentIds: %w", err)
	}
	return buf.String(), nil
}

// queryIDsJSON runs query (a call taking the ids' JSON as $1) once for all
// of ids and hands its result sets to read.
func queryIDsJSON(ctx context.Context, db *sql.DB, ids []string, query string, read func(*sql.Rows) error) error {
	list, err := intentIDsJSON(ids)
	if err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, query, setString(list))
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
	return mapError(err)
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
// attempts and flags in one round trip.
func (db *DB) intentsWithDetails(ctx context.Context, ids []string) ([]core.Intent, error) {
	var out []core.Intent
	err := queryIDsJSON(ctx, db.queries, ids, getIntentsSQL, func(rows *sql.Rows) error {
		got, err := readDetailedIntents(rows)
		out = append(out, got...)
		return err
	})
	return out, err
}

// attemptsOf reads the attempts of the intents ids, by intentId, in one
// round trip.
func (db *DB) attemptsOf(ctx context.Context, ids []string) (map[string][]attemptRow, error) {
	byIntent := make(map[string][]attemptRow, len(ids))
	err := queryIDsJSON(ctx, db.queries, ids, attemptsOfIDsSQL, func(rows *sql.Rows) error {
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

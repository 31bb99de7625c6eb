package sqlserver

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/submissionmanager/submission-manager/core"
)

// The reads of many intents at once (GetIntents, a listing page's
// attempts, the resubmission links) call a stored procedure (migrations
// 00015 and 00019) with the ids as one JSON array of strings spelled by
// jsonText (jsontext.go says why): one request of a few bytes per id
// whatever their number, where a VALUES table of parameters made Babelfish
// parse tens of kilobytes of text and bind a parameter per id at every
// call.

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
	text, err := procedureJSON(spelled)
	if err != nil {
		return "", fmt.Errorf("sqlserver: encode intentIds: %w", err)
	}
	return text, nil
}

// queryIDsJSON runs query (a call taking the ids' JSON as $1) once for all
// of ids and hands its result sets to read.
func queryIDsJSON(ctx context.Context, db querier, ids []string, query string, read func(*sql.Rows) error) error {
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

// resubmissionLinksSQL calls dbo.submission_resubmission_links, which
// reads the links touching the intents among the JSON array of intentIds
// $1 from either end.
const resubmissionLinksSQL = `EXEC dbo.submission_resubmission_links @ids = $1`

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
// attempts and flags in one round trip, on the executor's lane of due
// intents (GetIntents is the leader's read of them).
func (db *DB) intentsWithDetails(ctx context.Context, ids []string) ([]core.Intent, error) {
	var out []core.Intent
	err := queryIDsJSON(ctx, db.lanes[laneDue], ids, getIntentsSQL, func(rows *sql.Rows) error {
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
	err := queryIDsJSON(ctx, db.queries, ids, resubmissionLinksSQL, eachRow(func(rows *sql.Rows) error {
		var link [2]string
		err := rows.Scan(&link[0], &link[1])
		out = append(out, link)
		return err
	}))
	return out, err
}

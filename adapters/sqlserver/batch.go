package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// sqlKey is an intentId as SQL Server's equality sees it: trailing spaces
// do not count.
func sqlKey(id string) string { return strings.TrimRight(id, " ") }

// insertRounds bounds CreateIntents' runs of its inserts: a run fails
// with a duplicate key only when another session stored one of its
// intentIds meanwhile, and the next run finds that row.
const insertRounds = 3

// CreateIntents inserts a batch with set-based requests (insertRequest)
// that also read the batch's rows back with their attempts and flags: one
// round trip for a batch of up to rowsPerRequest(1) intents, which a
// single statement stores atomically. A larger batch is one request per
// that many intents in one transaction (BEGIN and COMMIT are a round trip
// each): one commit for the whole batch, and nothing of it stored when
// anything fails. Each intentId is sent once (the first occurrence, as
// SQL Server compares keys); a later occurrence gets the first one's row
// with Created=false, as a taken intentId does. An intent the schema
// cannot hold is Refused and claims nothing.
func (s *store) CreateIntents(ctx context.Context, intents []core.Intent) ([]ports.CreateIntentResult, error) {
	out := make([]ports.CreateIntentResult, len(intents))
	first := make(map[string]int, len(intents)) // sqlKey -> first item sent
	var rows []sqlserverdb.InsertIntentParams
	for i, intent := range intents {
		params, err := insertIntentParams(intent)
		var field *core.FieldError
		switch {
		case errors.As(err, &field):
			out[i].Refused = err
			continue
		case err != nil:
			return nil, err
		}
		key := sqlKey(intent.IntentID)
		if _, ok := first[key]; ok {
			continue
		}
		first[key] = i
		rows = append(rows, params)
	}
	if len(rows) == 0 {
		return out, nil
	}
	var (
		created map[string]bool
		stored  map[string]core.Intent
		err     error
	)
	for range insertRounds {
		created, stored, err = s.insertBatch(ctx, rows)
		if !errors.Is(err, errDuplicateKey) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	s.db.stats.wrote(len(created))
	for i, intent := range intents {
		if out[i].Refused != nil {
			continue
		}
		key := sqlKey(intent.IntentID)
		in, ok := stored[key]
		if !ok {
			return nil, fmt.Errorf("%w: intent %q: neither inserted nor found", core.ErrStoreUnavailable, intent.IntentID)
		}
		out[i] = ports.CreateIntentResult{Intent: in, Created: first[key] == i && created[in.IntentID]}
	}
	return out, nil
}

// insertBatch runs the inserts and read-backs: the one request of a
// batch that fits in one, else every request in one READ COMMITTED
// transaction; either is run again as a whole when it is chosen as a
// deadlock victim. It returns the intentIds it inserted and every row of
// the batch by key.
func (s *store) insertBatch(ctx context.Context, rows []sqlserverdb.InsertIntentParams) (map[string]bool, map[string]core.Intent, error) {
	var (
		created map[string]bool
		stored  map[string]core.Intent
	)
	parts := chunks(len(rows), rowsPerRequest(1))
	run := func(q querier) error {
		created = make(map[string]bool)
		stored = make(map[string]core.Intent)
		for _, c := range parts {
			query, args, err := insertRequest(rows[c[0]:c[1]])
			if err != nil {
				return err
			}
			if err := insertChunk(ctx, q, query, args, created, stored); err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	if len(parts) == 1 {
		err = s.db.retryDeadlocks(ctx, func() error { return run(s.pool) })
	} else {
		err = s.inRawTx(ctx, func(tx *sql.Tx) error { return run(tx) })
	}
	return created, stored, err
}

// querier is a pool or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// insertChunk runs one request of insertRequest: its first result names
// the inserted intentIds, the next two hold every row of the chunk with
// its details. An insert that lost a race on a key (2627) may send no
// first result at all: the procedure ends at the error (XACT_ABORT), and
// the text statement, on Babelfish, goes on to its read-back and reports
// the error only after it. So the first result is told apart by its
// columns, and an error anywhere fails the request, which CreateIntents
// then sends again.
func insertChunk(ctx context.Context, q querier, query string, args []any, created map[string]bool, stored map[string]core.Intent) error {
	res, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return mapError(err)
	}
	defer res.Close()
	cols, err := res.Columns()
	if err != nil {
		return mapError(err)
	}
	if len(cols) == 1 {
		for res.Next() {
			var id string
			if err := res.Scan(&id); err != nil {
				return mapError(err)
			}
			created[id] = true
		}
		if !res.NextResultSet() {
			return mapError(errors.Join(res.Err(), errors.New("sqlserver: the batch insert returned no read-back")))
		}
	}
	intents, err := readDetailedIntents(res)
	if err != nil {
		return mapError(err)
	}
	for _, in := range intents {
		stored[sqlKey(in.IntentID)] = in
	}
	return mapError(res.Err())
}

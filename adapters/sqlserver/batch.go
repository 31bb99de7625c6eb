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

// batchColumns are one intent's parameters in insertIntentsSQL, in order.
var batchColumns = []valuesColumn{
	{"intent_id", "nvarchar(255)"},
	{"submission_target", "nvarchar(255)"},
	{"payload", "varbinary(max)"},
	{"contract", "nvarchar(max)"},
	{"gateway_type", "varchar(16)"},
	{"mode", "varchar(16)"},
	{"created_at", "datetime2(7)"},
	{"next_due_at", "datetime2(7)"},
	{"not_before", "datetime2(7)"},
	{"trace_parent", "varchar(55)"},
}

// insertIntentsSQL inserts up to rows intents in one set-based statement
// and reads the batch's rows back in the same request: one round trip per
// rowsPerRequest(len(batchColumns)) intents. The rows travel as
// parameters of a VALUES table (values.go says why not as JSON); padding
// rows are NULL and insert nothing. The derived table gives the keys the
// key columns' collation, or comparing them fails with Msg 468 on a
// database whose default is not Latin1_General_100_BIN2. NOT EXISTS skips
// the intentIds already stored; OUTPUT names the rows this statement
// inserted (the first result set). Under READ COMMITTED two sessions can
// both pass NOT EXISTS for one intentId: the primary key then fails one
// statement with 2627 and CreateIntents sends it again. The read-back is
// readDetailedIntents' two result sets: every row of the batch with its
// flag, and the attempts of those that were stored before, so a taken
// intentId is answered with its history at no further round trip.
// Hand-written because sqlc cannot generate a statement whose parameter
// count varies, nor parse OUTPUT; TestHandWrittenSQLIsTSQL parses it.
func insertIntentsSQL(rows int) string {
	width := len(batchColumns)
	return `INSERT INTO submission_intents (
    intent_id, submission_target, payload, contract, gateway_type, mode,
    status, created_at, next_due_at, attempt_count, last_modified_at, not_before, trace_parent)
OUTPUT inserted.intent_id
SELECT j.intent_id, j.submission_target, j.payload, j.contract, j.gateway_type, j.mode,
       'pending', j.created_at, j.next_due_at, 0, SYSUTCDATETIME(), j.not_before, j.trace_parent
FROM (
    SELECT v.intent_id COLLATE Latin1_General_100_BIN2 AS intent_id,
           v.submission_target COLLATE Latin1_General_100_BIN2 AS submission_target,
           v.payload, v.contract, v.gateway_type, v.mode, v.created_at, v.next_due_at, v.not_before,
           v.trace_parent
    FROM ` + valuesTable("v", batchColumns, rows, width) + `
) AS j
WHERE j.intent_id IS NOT NULL
  AND NOT EXISTS (
    SELECT 1 FROM submission_intents AS s WHERE s.intent_id = j.intent_id);
SELECT ` + detailedIntentColumns + `
FROM submission_intents
WHERE ` + inIntentIDs("intent_id", rows, width) + `;
` + attemptsOfSQL(inIntentIDs("intent_id", rows, width))
}

// batchArgs are one intent's parameters, in batchColumns' order. Strings
// are declared nvarchar(max) whatever their length (see setString).
func batchArgs(p sqlserverdb.InsertIntentParams) []any {
	return []any{setString(p.IntentID), setString(p.SubmissionTarget), p.Payload, setString(p.Contract),
		setString(p.GatewayType), setString(p.Mode), p.CreatedAt, p.NextDueAt, p.NotBefore, p.TraceParent}
}

// sqlKey is an intentId as SQL Server's equality sees it: trailing spaces
// do not count.
func sqlKey(id string) string { return strings.TrimRight(id, " ") }

// insertRounds bounds CreateIntents' runs of its inserts: a run fails
// with a duplicate key only when another session stored one of its
// intentIds meanwhile, and the next run finds that row.
const insertRounds = 3

// CreateIntents inserts a batch with set-based statements that also read
// the batch's rows back with their attempts and flags: one round trip for
// a batch of up to rowsPerRequest(9) intents, which a single statement
// stores atomically. A larger batch is one request per that many intents
// in one transaction (BEGIN and COMMIT are a round trip each): one commit
// for the whole batch, and nothing of it stored when anything fails. Each
// intentId is sent once (the first occurrence, as SQL Server compares
// keys); a later occurrence gets the first one's row with Created=false,
// as a taken intentId does. An intent the schema cannot hold is Refused
// and claims nothing.
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
	width := len(batchColumns)
	parts := chunks(len(rows), rowsPerRequest(width))
	run := func(q querier) error {
		created = make(map[string]bool)
		stored = make(map[string]core.Intent)
		for _, c := range parts {
			n := paddedRows(c[1]-c[0], width)
			args := make([]any, 0, n*width)
			for _, r := range rows[c[0]:c[1]] {
				args = append(args, batchArgs(r)...)
			}
			if err := insertChunk(ctx, q, insertIntentsSQL(n), padParams(args, n, width), created, stored); err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	if len(parts) == 1 {
		err = s.db.retryDeadlocks(ctx, func() error { return run(s.db.queries) })
	} else {
		err = s.db.inRawTx(ctx, func(tx *sql.Tx) error { return run(tx) })
	}
	return created, stored, err
}

// querier is a pool or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// insertChunk runs one request of insertIntentsSQL: its first result names
// the inserted intentIds, the next two hold every row of the chunk with
// its details.
func insertChunk(ctx context.Context, q querier, query string, args []any, created map[string]bool, stored map[string]core.Intent) error {
	res, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return mapError(err)
	}
	defer res.Close()
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
	intents, err := readDetailedIntents(res)
	if err != nil {
		return mapError(err)
	}
	for _, in := range intents {
		stored[sqlKey(in.IntentID)] = in
	}
	return mapError(res.Err())
}

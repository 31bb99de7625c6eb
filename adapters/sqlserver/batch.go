package sqlserver

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// insertColumns are the members of one intent's item in insertIntentsSQL's
// JSON. Its contract is an index into the batch's distinct contracts, and
// its payload travels beside the JSON (see insertIntentsSQL).
var insertColumns = []batchColumn{
	{"ord", "int", false}, {"intent_id", "nvarchar(255)", true}, {"submission_target", "nvarchar(255)", true},
	{"contract", "int", false}, {"gateway_type", "varchar(16)", false}, {"mode", "varchar(16)", false},
	{"created_at", "datetime2(7)", false}, {"next_due_at", "datetime2(7)", false}, {"not_before", "datetime2(7)", false},
	{"trace_parent", "varchar(55)", false},
}

// insertBatch is insertIntentsSQL's JSON: the distinct contracts, spelled
// by jsonText, and the items.
type insertBatch struct {
	Contracts []string     `json:"contracts"`
	Items     []insertItem `json:"items"`
}

// insertItem is one intent in insertIntentsSQL's JSON.
type insertItem struct {
	Ord              int    `json:"ord"`
	IntentID         string `json:"intent_id"`
	SubmissionTarget string `json:"submission_target"`
	Contract         int    `json:"contract"`
	GatewayType      string `json:"gateway_type"`
	Mode             string `json:"mode"`
	CreatedAt        string `json:"created_at"`
	NextDueAt        string `json:"next_due_at"`
	NotBefore        string `json:"not_before,omitempty"`
	TraceParent      string `json:"trace_parent,omitempty"`
	Spelled          int    `json:"spelled,omitempty"`
	// Payload is the payload, spelled, in a batch for
	// dbo.submission_insert_intents (payloadTravelsInJSON); Long is then
	// the item's position when the payload is too long for OPENJSON's WITH
	// on Babelfish (jsonTextLong).
	Payload string `json:"payload,omitempty"`
	Long    *int   `json:"long,omitempty"`
}

// insertItemOf is the item of the intent at position ord of a request,
// whose contract is the batch's contract number contract, with its
// payload when withPayload.
func insertItemOf(ord, contract int, p sqlserverdb.InsertIntentParams, withPayload bool) insertItem {
	var sp speller
	it := insertItem{Ord: ord, IntentID: sp.text(p.IntentID), SubmissionTarget: sp.text(p.SubmissionTarget),
		Contract: contract, GatewayType: p.GatewayType, Mode: p.Mode,
		CreatedAt: datetime2JSON(p.CreatedAt), NextDueAt: datetime2JSON(p.NextDueAt)}
	if p.NotBefore.Valid {
		it.NotBefore = datetime2JSON(p.NotBefore.Time)
	}
	if p.TraceParent.Valid {
		// Printable ASCII (core.NormalizeTraceParent): never spelled.
		it.TraceParent = p.TraceParent.String
	}
	it.Spelled = sp.flag()
	if withPayload {
		// The procedure reads back each text that holds a "~" (every
		// spelled text does, and no other) and has no use for "spelled".
		it.Spelled = 0
		it.Payload = jsonText(string(p.Payload))
		if jsonTextLong(it.Payload) {
			it.Long = &ord
		}
	}
	return it
}

// insertContractsSQL is the derived table of the batch's distinct
// contracts by number. They are read through OPENJSON's default schema,
// which reads a long string whole on Babelfish too, and each is read back
// from its spelling once: a batch's intents share a few contracts (one
// per target), and reading back a JSON text costs Babelfish several
// function calls. OFFSET 0 ROWS keeps the derived table from being merged
// into the join (where PostgreSQL would read back the contract once per
// intent); SQL Server reads it the same either way.
var insertContractsSQL = `(SELECT CAST(c.[key] AS int) AS number,
              ` + jsonTextFunction + `(c.contract) AS contract
       FROM (SELECT c0.[key], c0.value COLLATE Latin1_General_100_BIN2 AS contract
             FROM OPENJSON(CAST($1 AS nvarchar(max)), '$.contracts') AS c0) AS c
       ORDER BY number OFFSET 0 ROWS)`

// insertIntentsSQL inserts up to rows intents in one set-based statement
// and reads the batch's rows back in the same request: one round trip per
// rowsPerRequest(1) intents. The intents travel as one JSON parameter ($1,
// read as jsontext.go describes) and their payloads beside it, one
// varbinary parameter each ($2 on), joined by position: Babelfish's
// OPENJSON cannot make bytes of a JSON string (it neither decodes base64
// nor converts hex), and a varbinary parameter arrives exactly on both
// servers. So a batch binds rows+1 parameters instead of nine per intent.
// Padding payloads are NULL and join no item. NOT EXISTS skips the
// intentIds already stored; OUTPUT names the rows this statement inserted
// (the first result set). Under READ COMMITTED two sessions can both pass
// NOT EXISTS for one intentId: the primary key then fails one statement
// with 2627 and CreateIntents sends it again. The read-back is
// readDetailedIntents' two result sets: every row of the batch with its
// facts, and the attempts of those that were stored before, so a taken
// intentId is answered with its history at no further round trip.
// Hand-written because sqlc cannot generate a statement whose parameter
// count varies, nor parse OPENJSON's WITH or OUTPUT;
// TestHandWrittenSQLIsTSQL parses it.
func insertIntentsSQL(rows int) string {
	var payloads strings.Builder
	for r := range rows {
		if r > 0 {
			payloads.WriteString(", ")
		}
		fmt.Fprintf(&payloads, "(%d, CAST($%d AS varbinary(max)))", r, r+2)
	}
	const items = "CAST($1 AS nvarchar(max)), '$.items'"
	ids := "SELECT i.intent_id FROM " + jsonItemsSQL(items, insertColumns[:2]) + " AS i"
	return `INSERT INTO submission_intents (
    intent_id, submission_target, payload, contract, gateway_type, mode,
    status, created_at, next_due_at, attempt_count, last_modified_at, not_before, trace_parent)
OUTPUT inserted.intent_id
SELECT v.intent_id, v.submission_target, p.payload, c.contract, v.gateway_type, v.mode,
       'pending', v.created_at, v.next_due_at, 0, SYSUTCDATETIME(), v.not_before, v.trace_parent
FROM ` + jsonItemsSQL(items, insertColumns) + ` AS v
JOIN ` + insertContractsSQL + ` AS c ON c.number = v.contract
JOIN (VALUES ` + payloads.String() + `) AS p (ord, payload) ON p.ord = v.ord
WHERE NOT EXISTS (
    SELECT 1 FROM submission_intents AS s WHERE s.intent_id = v.intent_id);
SELECT ` + detailedIntentColumns + `
FROM submission_intents
WHERE intent_id IN (` + ids + `);
` + attemptsOfSQL("intent_id IN ("+ids+")")
}

// insertArgs are insertIntentsSQL's parameters: the batch's JSON, then
// each item's payload, padded with NULLs to rows.
func insertArgs(rows []sqlserverdb.InsertIntentParams, padded int) ([]any, error) {
	doc, err := insertJSON(rows, false)
	if err != nil {
		return nil, err
	}
	args := make([]any, 1, padded+1)
	args[0] = doc
	for _, r := range rows {
		args = append(args, r.Payload)
	}
	for len(args) < padded+1 {
		args = append(args, []byte(nil))
	}
	return args, nil
}

// insertJSON is a request's batch: the distinct contracts and the items,
// with their payloads when withPayloads.
func insertJSON(rows []sqlserverdb.InsertIntentParams, withPayloads bool) (any, error) {
	batch := insertBatch{Items: make([]insertItem, len(rows))}
	numbers := make(map[string]int)
	for i, r := range rows {
		n, ok := numbers[r.Contract]
		if !ok {
			n = len(batch.Contracts)
			numbers[r.Contract] = n
			batch.Contracts = append(batch.Contracts, jsonText(r.Contract))
		}
		batch.Items[i] = insertItemOf(i, n, r, withPayloads)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(batch); err != nil {
		return nil, fmt.Errorf("encode batch: %w", err)
	}
	return setString(buf.String()), nil
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
// a batch of up to rowsPerRequest(1) intents, which a single statement
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

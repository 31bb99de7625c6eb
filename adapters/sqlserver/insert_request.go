package sqlserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
)

// A batch insert whose payloads are all printable ASCII, as compacted JSON
// payloads nearly always are, is one call of dbo.submission_insert_intents
// (migration 00016) with the batch as JSON, payloads included: Babelfish
// parses a request's text at every execution, and the text statement
// (insertIntentsSQL) with its read-back and its VALUES list of padded
// payload parameters ran to 6-20 kB a request; a procedure is parsed once.
// Any other batch is sent as that text statement, which binds each payload
// as varbinary.

// insertIntentsProcSQL calls dbo.submission_insert_intents with four JSON
// arrays (procArgs): the items with their payloads, the distinct
// contracts, the payloads too long for OPENJSON's WITH on Babelfish
// (jsonTextLong), and the intentIds. Each is a parameter of its own
// because OPENJSON parses the whole document it is given at every use,
// and the procedure reads the contracts, the long payloads and the ids
// (twice, for the read-back) apart from the items. It answers as
// insertIntentsSQL does: the intentIds it inserted, then every row of the
// batch with its facts, then their attempts. TestHandWrittenSQLIsTSQL
// parses the call, TestMigrationsAreTSQL the procedure, and
// TestIntakeProceduresAnswerTheReadColumns holds its result sets to the
// columns read here.
const insertIntentsProcSQL = `EXEC dbo.submission_insert_intents @items = $1, @contracts = $2, @long = $3, @ids = $4`

// payloadTravelsInJSON reports whether a payload can travel inside the
// batch's JSON as text: when every byte is printable ASCII (0x20-0x7E).
// Such a text, spelled by jsonText (which leaves only "~0", "~1" and "~2"
// codes in it) and read back, becomes exactly those bytes through varchar
// in a Latin1 collation, on SQL Server 2022 and on Babelfish; the bytes of
// any other payload would depend on a code page, and neither server's
// OPENJSON decodes base64 or hex into bytes the same way (Babelfish's not
// at all). A compacted JSON payload holds no control byte (JSON escapes
// them in strings, and core.CompactPayload drops the whitespace between
// tokens), so only a payload with non-ASCII text is sent the other way.
// This is the one place that states the rule.
func payloadTravelsInJSON(payload []byte) bool {
	return len(payload) > 0 && !slices.ContainsFunc(payload, func(c byte) bool { return c < 0x20 || c > 0x7e })
}

// insertRequest is the request that stores rows (at most
// rowsPerRequest(1)): the procedure's call when every payload travels in
// the JSON, else insertIntentsSQL padded to a power of two, with its
// parameters.
func insertRequest(rows []sqlserverdb.InsertIntentParams) (query string, args []any, err error) {
	if !slices.ContainsFunc(rows, func(r sqlserverdb.InsertIntentParams) bool { return !payloadTravelsInJSON(r.Payload) }) {
		args, err := newInsertSet(rows, true).procArgs()
		return insertIntentsProcSQL, args, err
	}
	n := paddedRows(len(rows), 1)
	args, err = insertArgs(rows, n)
	return insertIntentsSQL(n), args, err
}

// insertColumns are the members of one intent's item in insertIntentsSQL's
// JSON. Its contract is an index into the batch's distinct contracts, and
// its payload travels beside the JSON there (the procedure reads the same
// items with their payloads).
var insertColumns = []batchColumn{
	{"ord", "int", false}, {"intent_id", "nvarchar(255)", true}, {"submission_target", "nvarchar(255)", true},
	{"contract", "int", false}, {"gateway_type", "varchar(16)", false}, {"mode", "varchar(16)", false},
	{"created_at", "datetime2(7)", false}, {"next_due_at", "datetime2(7)", false}, {"not_before", "datetime2(7)", false},
	{"trace_parent", "varchar(55)", false},
}

// insertSet is a request's batch as both requests send it: the distinct
// contracts, spelled by jsonText, the items, and, with payloads, the
// spelled payloads too long for OPENJSON's WITH on Babelfish, which the
// procedure reads through the default schema (whole on both servers) in
// one pass, as it reads the contracts.
type insertSet struct {
	Contracts []string     `json:"contracts"`
	Items     []insertItem `json:"items"`
	long      []string
}

// insertItem is one intent of an insertSet.
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
	// dbo.submission_insert_intents (payloadTravelsInJSON), unless it is
	// too long for OPENJSON's WITH; Long is then its position among the
	// set's long payloads instead.
	Payload string `json:"payload,omitempty"`
	Long    *int   `json:"long,omitempty"`
}

// insertItemOf is the item of the intent at position ord of a request,
// whose contract is the batch's contract number contract.
func insertItemOf(ord, contract int, p sqlserverdb.InsertIntentParams) insertItem {
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
// rowsPerRequest(1) intents, for a batch with a payload that cannot travel
// in the JSON (insertRequest). The intents travel as one JSON parameter ($1,
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

// insertArgs are insertIntentsSQL's parameters: the set's JSON, then
// each item's payload, padded with NULLs to rows.
func insertArgs(rows []sqlserverdb.InsertIntentParams, padded int) ([]any, error) {
	doc, err := jsonArg(newInsertSet(rows, false))
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

// procArgs are insertIntentsProcSQL's parameters.
func (set insertSet) procArgs() ([]any, error) {
	ids := make([]string, len(set.Items))
	for i, it := range set.Items {
		ids[i] = it.IntentID
	}
	args := make([]any, 0, 4)
	for _, v := range []any{set.Items, set.Contracts, set.long, ids} {
		doc, err := jsonArg(v)
		if err != nil {
			return nil, err
		}
		args = append(args, doc)
	}
	return args, nil
}

// newInsertSet is the set of rows, with their payloads when withPayloads.
func newInsertSet(rows []sqlserverdb.InsertIntentParams, withPayloads bool) insertSet {
	set := insertSet{Contracts: []string{}, Items: make([]insertItem, len(rows)), long: []string{}}
	numbers := make(map[string]int)
	for i, r := range rows {
		n, ok := numbers[r.Contract]
		if !ok {
			n = len(set.Contracts)
			numbers[r.Contract] = n
			set.Contracts = append(set.Contracts, jsonText(r.Contract))
		}
		it := insertItemOf(i, n, r)
		if withPayloads {
			// The procedure reads back each text that holds a "~" (every
			// spelled text does, and no other) and has no use for "spelled".
			it.Spelled = 0
			switch payload := jsonText(string(r.Payload)); {
			case jsonTextLong(payload):
				it.Long = new(len(set.long))
				set.long = append(set.long, payload)
			default:
				it.Payload = payload
			}
		}
		set.Items[i] = it
	}
	return set
}

// jsonArg is v as a JSON parameter.
func jsonArg(v any) (any, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode batch: %w", err)
	}
	return setString(buf.String()), nil
}

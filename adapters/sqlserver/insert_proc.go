package sqlserver

import (
	"slices"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
)

// A batch insert whose payloads are all printable ASCII, as compacted JSON
// payloads nearly always are, is one call of dbo.submission_insert_intents
// (migration 00016) with the batch's JSON as its only parameter, payloads
// included: Babelfish parses a request's text at every execution, and the
// text statement (insertIntentsSQL) with its read-back and its VALUES list
// of padded payload parameters ran to 6-20 kB a request; a procedure is
// parsed once. Any other batch is sent as that text statement, which binds
// each payload as varbinary.

// insertIntentsProcSQL calls dbo.submission_insert_intents, which answers
// as insertIntentsSQL does: the intentIds it inserted, then every row of
// the batch with its facts, then their attempts. TestHandWrittenSQLIsTSQL
// parses the call, TestMigrationsAreTSQL the procedure, and
// TestIntakeProceduresAnswerTheReadColumns holds its result sets to the
// columns read here.
const insertIntentsProcSQL = `EXEC dbo.submission_insert_intents @items = $1`

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
		doc, err := insertJSON(rows, true)
		return insertIntentsProcSQL, []any{doc}, err
	}
	n := paddedRows(len(rows), 1)
	args, err = insertArgs(rows, n)
	return insertIntentsSQL(n), args, err
}

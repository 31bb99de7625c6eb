package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The executor's reservations and results travel as batches. Each request
// is one T-SQL batch, one round trip: it takes the lease lock in Shared
// mode and checks the fence once (fence.go), writes every runnable item
// with set-based statements in one transaction, and answers one verdict per
// item. The items travel as the parameters of a VALUES table (values.go
// says why not as JSON), copied once into a table variable; each carries
// its position in the batch ("ord"), by which its verdict comes back. Every
// comparison of intentIds gives both sides the key columns' binary
// collation, in a select list (where teesql parses COLLATE): the table
// variables have the database's default collation, which is
// case-insensitive on Babelfish and on most SQL Server installations, and
// "a" and "A" are two intents. Babelfish cannot read an UPDATE's FROM
// tables in its OUTPUT clause, so the updated rows come back by key; and
// an UPDATE names its target table only as its target, the items in FROM
// and the match in WHERE (the target repeated in FROM hides FROM's other
// tables from SET there), with conditions on the items in their derived
// table. Hand-written because sqlc cannot generate a
// statement whose parameter count varies, nor parse OUTPUT or THROW;
// TestHandWrittenSQLIsTSQL parses them.

// fenceParams is how many parameters follow a fenced batch's items: the
// lease name, holder, epoch, lease lock resource and lock timeout.
const fenceParams = 5

// fencedBatch is one kind of fenced batch: its items' columns (ord first)
// and the statements that follow the copy of the items into @items; they
// end with the COMMIT and the SELECT of (ord, verdict).
type fencedBatch struct {
	cols []valuesColumn
	body string
}

// sql is the batch's text for rows rows of items, followed by the fence's
// parameters. It throws 51001 when the lease lock is not granted and 51000
// when the fence does not hold; XACT_ABORT then rolls everything back.
func (b fencedBatch) sql(rows int) string {
	width := len(b.cols)
	f := rows*width + 1 // the first fence parameter
	var decl, names strings.Builder
	for i, c := range b.cols {
		if i > 0 {
			decl.WriteString(", ")
			names.WriteString(", ")
		}
		fmt.Fprintf(&decl, "%s %s NULL", c.name, c.sqlType)
		names.WriteString(c.name)
	}
	return fmt.Sprintf(`SET NOCOUNT ON;
SET XACT_ABORT ON;
DECLARE @holder_id varchar(128) = CAST($%[2]d AS varchar(128)), @lease_epoch bigint = CAST($%[3]d AS bigint),
    @lock_status int, @now datetime2(7);
DECLARE @items TABLE (%[6]s);
INSERT INTO @items (%[7]s)
SELECT %[7]s FROM %[8]s
WHERE v.ord IS NOT NULL;
BEGIN TRANSACTION;
EXEC @lock_status = sp_getapplock @Resource = $%[4]d, @LockMode = 'Shared', @LockOwner = 'Transaction', @LockTimeout = $%[5]d;
IF @lock_status < 0 THROW 51001, N'the lease lock was not granted', 1;
IF NOT EXISTS (SELECT 1 FROM submission_manager_leases
    WHERE lease_name = CAST($%[1]d AS varchar(64)) AND holder_id = @holder_id
      AND lease_epoch = @lease_epoch AND expires_at > SYSUTCDATETIME())
    THROW 51000, N'fenced: the lease is not held at this epoch', 1;
SET @now = SYSUTCDATETIME();
%[9]s`, f, f+1, f+2, f+3, f+4, decl.String(), names.String(), valuesTable("v", b.cols, rows, width), b.body)
}

// The verdicts a batch answers per item.
const (
	verdictApplied     = 0
	verdictNotRunnable = 1
	verdictNotFound    = 2
)

// startAttempts reserves attempts. Each item counts its attempt on its
// intent only while the intent is pending at attempt count number-1, and
// inserts the attempt row, open and counted as sent: the reservation
// precedes the gateway call. last_modified_at moves strictly forward, as in
// every intent update.
var startAttempts = fencedBatch{
	cols: []valuesColumn{
		{"ord", "int"}, {"intent_id", "nvarchar(255)"}, {"attempt_number", "int"}, {"started_at", "datetime2(7)"},
	},
	body: `DECLARE @started TABLE (intent_id nvarchar(255) NOT NULL);
UPDATE submission_intents
SET attempt_count = submission_intents.attempt_count + 1,
    last_modified_at = CASE WHEN @now > submission_intents.last_modified_at THEN @now
                            ELSE DATEADD(nanosecond, 100, submission_intents.last_modified_at) END
OUTPUT inserted.intent_id INTO @started (intent_id)
FROM (SELECT intent_id COLLATE Latin1_General_100_BIN2 AS intent_id, attempt_number FROM @items) AS i
WHERE submission_intents.intent_id = i.intent_id
  AND submission_intents.status = 'pending'
  AND submission_intents.attempt_count = i.attempt_number - 1;
INSERT INTO submission_attempts (intent_id, attempt_number, holder_id, lease_epoch, started_at, sent)
SELECT i.intent_id, i.attempt_number, @holder_id, @lease_epoch, i.started_at, 1
FROM (SELECT intent_id COLLATE Latin1_General_100_BIN2 AS intent_id, attempt_number, started_at FROM @items) AS i
WHERE i.intent_id IN (SELECT s.intent_id COLLATE Latin1_General_100_BIN2 FROM @started AS s);
COMMIT TRANSACTION;
SELECT i.ord,
       CASE WHEN i.intent_id IN (SELECT s.intent_id COLLATE Latin1_General_100_BIN2 FROM @started AS s) THEN 0
            WHEN EXISTS (SELECT 1 FROM submission_intents AS t WHERE t.intent_id = i.intent_id) THEN 1
            ELSE 2 END
FROM (SELECT ord, intent_id COLLATE Latin1_General_100_BIN2 AS intent_id FROM @items) AS i;`,
}

// finishAttempts closes attempts and applies their decisions. An item
// applies only while its intent is pending at attempt count number and
// that attempt is open. The intent row is updated before the attempt row,
// the order startAttempts uses, so the two never deadlock each other.
var finishAttempts = fencedBatch{
	cols: []valuesColumn{
		{"ord", "int"}, {"intent_id", "nvarchar(255)"}, {"attempt_number", "int"}, {"finished_at", "datetime2(7)"},
		{"outcome_status", "varchar(16)"}, {"outcome_reason", "nvarchar(max)"}, {"message_id", "nvarchar(max)"},
		{"error", "nvarchar(max)"}, {"sent", "bit"}, {"status", "varchar(16)"}, {"next_due_at", "datetime2(7)"},
		{"final_outcome_status", "varchar(16)"}, {"final_outcome_reason", "nvarchar(max)"},
		{"final_message_id", "nvarchar(max)"}, {"exhausted_reason", "varchar(32)"}, {"possibly_accepted", "bit"},
		{"accepted_after_deadline", "bit"}, {"accepted_message_id", "nvarchar(max)"},
	},
	body: `DECLARE @applied TABLE (intent_id nvarchar(255) NOT NULL);
UPDATE submission_intents
SET status = i.status,
    next_due_at = i.next_due_at,
    final_outcome_status = i.final_outcome_status,
    final_outcome_reason = i.final_outcome_reason,
    final_message_id = i.final_message_id,
    exhausted_reason = i.exhausted_reason,
    possibly_accepted = CASE WHEN i.possibly_accepted = 1 THEN 1 ELSE submission_intents.possibly_accepted END,
    accepted_after_deadline = i.accepted_after_deadline,
    accepted_message_id = i.accepted_message_id,
    last_modified_at = CASE WHEN @now > submission_intents.last_modified_at THEN @now
                            ELSE DATEADD(nanosecond, 100, submission_intents.last_modified_at) END
OUTPUT inserted.intent_id INTO @applied (intent_id)
FROM (SELECT o.* FROM (SELECT intent_id COLLATE Latin1_General_100_BIN2 AS intent_id, attempt_number, status,
                              next_due_at, final_outcome_status, final_outcome_reason, final_message_id,
                              exhausted_reason, possibly_accepted, accepted_after_deadline, accepted_message_id
                       FROM @items) AS o
      WHERE EXISTS (SELECT 1 FROM submission_attempts AS a
                    WHERE a.intent_id = o.intent_id AND a.attempt_number = o.attempt_number
                      AND a.finished_at IS NULL)) AS i
WHERE submission_intents.intent_id = i.intent_id
  AND submission_intents.status = 'pending'
  AND submission_intents.attempt_count = i.attempt_number;
UPDATE submission_attempts
SET finished_at = i.finished_at,
    outcome_status = i.outcome_status,
    outcome_reason = i.outcome_reason,
    message_id = i.message_id,
    error = i.error,
    sent = i.sent
FROM (SELECT o.* FROM (SELECT intent_id COLLATE Latin1_General_100_BIN2 AS intent_id, attempt_number,
                              finished_at, outcome_status, outcome_reason, message_id, error, sent
                       FROM @items) AS o
      WHERE o.intent_id IN (SELECT s.intent_id COLLATE Latin1_General_100_BIN2 FROM @applied AS s)) AS i
WHERE submission_attempts.intent_id = i.intent_id AND submission_attempts.attempt_number = i.attempt_number;
COMMIT TRANSACTION;
SELECT i.ord,
       CASE WHEN i.intent_id IN (SELECT s.intent_id COLLATE Latin1_General_100_BIN2 FROM @applied AS s) THEN 0
            WHEN EXISTS (SELECT 1 FROM submission_intents AS t WHERE t.intent_id = i.intent_id) THEN 1
            ELSE 2 END
FROM (SELECT ord, intent_id COLLATE Latin1_General_100_BIN2 AS intent_id FROM @items) AS i;`,
}

// startArgs are one reservation's parameters, in startAttempts' columns.
func startArgs(ord int, p ports.StartAttemptParams, n int32) []any {
	return []any{int32(ord), setString(p.IntentID), n, dbTime(p.StartedAt)}
}

// finishArgs are one result's parameters, in finishAttempts' columns, from
// parameters that passed Validate: the attempt's outcome or error, and the
// decision. An empty text is NULL.
func finishArgs(ord int, p ports.FinishAttemptParams, n int32) []any {
	var outcome, reason, messageID, final, finalReason, finalMessageID string
	if o := p.Outcome; o != nil {
		outcome, reason, messageID = string(o.Status), o.Reason, o.MessageID
	}
	d := p.Decision
	if o := d.FinalOutcome; o != nil {
		final, finalReason, finalMessageID = string(o.Status), o.Reason, o.MessageID
	}
	return []any{int32(ord), setString(p.IntentID), n, dbTime(p.FinishedAt),
		nullSetString(outcome), nullSetString(reason), nullSetString(messageID), nullSetString(p.Error), p.Sent,
		setString(string(d.Status)), nullTime(d.NextDueAt), nullSetString(final), nullSetString(finalReason),
		nullSetString(finalMessageID), nullSetString(string(d.ExhaustedReason)), d.PossiblyAccepted,
		d.AcceptedAfterDeadline, nullSetString(d.AcceptedMessageID)}
}

// nullSetString is setString for a nullable column: NULL for "".
func nullSetString(s string) any {
	if s == "" {
		return sql.NullString{}
	}
	return setString(s)
}

// StartAttempt reserves one attempt: a batch of one.
func (s *store) StartAttempt(ctx context.Context, p ports.StartAttemptParams) error {
	return s.StartAttempts(ctx, []ports.StartAttemptParams{p})[0]
}

// FinishAttempt closes one attempt: a batch of one.
func (s *store) FinishAttempt(ctx context.Context, p ports.FinishAttemptParams) error {
	return s.FinishAttempts(ctx, []ports.FinishAttemptParams{p})[0]
}

// StartAttempts reserves a batch of attempts in one fenced round trip (or
// one per rowsPerRequest items).
func (s *store) StartAttempts(ctx context.Context, ps []ports.StartAttemptParams) []error {
	errs := ports.ValidateStarts(ps)
	s.writeBatch(ctx, "start attempts", startAttempts, errs, len(ps),
		func(i int) core.Fence { return ps[i].Fence },
		func(i int) (string, int) { return ps[i].IntentID, ps[i].Number },
		func(i int, n int32) []any { return startArgs(i, ps[i], n) },
		func(i int) string { return fmt.Sprintf("is not pending at attempt count %d", ps[i].Number-1) })
	return errs
}

// FinishAttempts closes a batch of attempts and applies their decisions in
// one fenced round trip (or one per rowsPerRequest items).
func (s *store) FinishAttempts(ctx context.Context, ps []ports.FinishAttemptParams) []error {
	errs := ports.ValidateFinishes(ps)
	s.writeBatch(ctx, "finish attempts", finishAttempts, errs, len(ps),
		func(i int) core.Fence { return ps[i].Fence },
		func(i int) (string, int) { return ps[i].IntentID, ps[i].Number },
		func(i int, n int32) []any { return finishArgs(i, ps[i], n) },
		func(i int) string {
			return fmt.Sprintf("is not pending at attempt count %d with that attempt open", ps[i].Number)
		})
	return errs
}

// writeBatch writes the n items of a batch that the batch rule let through
// (errs[i] nil) with b, under the first such item's fence, and fills in
// every item's answer. An item with another fence is refused, as is a
// number the int column cannot hold.
func (s *store) writeBatch(ctx context.Context, op string, b fencedBatch, errs []error, n int,
	fenceOf func(i int) core.Fence, key func(i int) (string, int), args func(i int, number int32) []any,
	notRunnable func(i int) string) {
	var (
		fence core.Fence
		rows  [][]any
		ords  []int
	)
	for i := range n {
		if errs[i] != nil {
			errs[i] = fmt.Errorf("sqlserver: %w", errs[i])
			continue
		}
		if len(rows) == 0 {
			fence = fenceOf(i)
		} else if fenceOf(i) != fence {
			errs[i] = fmt.Errorf("sqlserver: %w: a batch is written under one fence", ports.ErrInvalidWrite)
			continue
		}
		_, number := key(i)
		num, err := attemptNumber(number)
		if err != nil {
			errs[i] = err
			continue
		}
		rows = append(rows, args(i, num))
		ords = append(ords, i)
	}
	if len(rows) == 0 {
		return
	}
	if err := validateLeaseNames(fence.LeaseName, fence.HolderID); err != nil {
		for _, i := range ords {
			errs[i] = err
		}
		return
	}
	width := len(b.cols)
	verdicts := make(map[int]int, len(rows))
	var failed error
	for _, c := range chunks(len(rows), rowsPerRequest(width+fenceParams)) {
		err := s.db.retryDeadlocks(ctx, func() error {
			return s.runFencedBatch(ctx, b, fence, rows[c[0]:c[1]], verdicts)
		})
		if err != nil {
			failed = fmt.Errorf("sqlserver: %s: %w", op, err)
			for _, i := range ords[c[0]:c[1]] {
				errs[i] = failed
			}
		}
	}
	for _, i := range ords {
		if errs[i] != nil {
			continue
		}
		id, _ := key(i)
		switch v, ok := verdicts[i]; {
		case !ok:
			errs[i] = fmt.Errorf("%w: sqlserver: %s: no verdict for intent %q", core.ErrStoreUnavailable, op, id)
		case v == verdictNotRunnable:
			errs[i] = fmt.Errorf("%w: intent %q %s", core.ErrIntentNotRunnable, id, notRunnable(i))
		case v == verdictNotFound:
			errs[i] = fmt.Errorf("%w: %q", core.ErrIntentNotFound, id)
		}
	}
}

// runFencedBatch sends one request of b for rows (each row's parameters,
// its ord first) and records its verdicts by ord.
func (s *store) runFencedBatch(ctx context.Context, b fencedBatch, f core.Fence, rows [][]any, verdicts map[int]int) error {
	width := len(b.cols)
	padded := paddedRows(len(rows), width+fenceParams)
	args := make([]any, 0, padded*width+fenceParams)
	for _, r := range rows {
		args = append(args, r...)
	}
	args = padParams(args, padded, width)
	ms := int32(min(s.db.cfg.LeaseLockTimeout.Milliseconds(), math.MaxInt32))
	args = append(args, f.LeaseName, f.HolderID, f.Epoch, setString(leaseLockPrefix+f.LeaseName), ms)
	res, err := s.db.queries.QueryContext(ctx, b.sql(padded), args...)
	if err != nil {
		return mapError(err)
	}
	defer res.Close()
	for res.Next() {
		var ord, v int
		if err := res.Scan(&ord, &v); err != nil {
			return mapError(err)
		}
		verdicts[ord] = v
	}
	return mapError(res.Err())
}

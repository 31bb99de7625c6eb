package sqlserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The executor's reservations and results travel as batches. Each request
// is one T-SQL batch, one round trip: it takes the lease lock in Shared
// mode and checks the fence once (fence.go), writes every runnable item
// with set-based statements in one transaction, and answers one verdict per
// item. The items travel as one JSON parameter (jsontext.go says why, and
// how its strings survive Babelfish); each carries its position in the
// batch ("ord"), by which its verdict comes back. The statement text does
// not depend on the batch's size, so each kind has one plan. Every
// comparison of intentIds gives both sides the key columns' binary
// collation, in a select list (where teesql parses COLLATE): a table
// variable has the database's default collation, which is
// case-insensitive on Babelfish and on most SQL Server installations, and
// "a" and "A" are two intents. Babelfish cannot read an UPDATE's FROM
// tables in its OUTPUT clause, so the updated rows come back by key; and
// an UPDATE names its target table only as its target, the items in FROM
// and the match in WHERE (the target repeated in FROM hides FROM's other
// tables from SET there). Hand-written because sqlc cannot parse OPENJSON's
// WITH, OUTPUT or THROW; TestHandWrittenSQLIsTSQL parses them.

// batchColumn is one member of a batch item: its name, its T-SQL type, and
// whether it is a string that jsonText spells.
type batchColumn struct {
	name, sqlType string
	text          bool
}

// fencedBatch is one kind of fenced batch: its items' columns (ord first)
// and the statements that follow the fence check; they end with the COMMIT
// and the SELECT of (ord, verdict). Each statement reads the items as
// "FROM ITEMS", which becomes the expanded JSON, aliased v, its strings
// read back and in the binary collation.
type fencedBatch struct {
	cols []batchColumn
	body string
	// text is sql's, built once.
	text string
}

// newFencedBatch builds a batch kind and its text.
func newFencedBatch(cols []batchColumn, body string) fencedBatch {
	b := fencedBatch{cols: cols, body: body}
	b.text = b.sql()
	return b
}

// sql is the batch's text: $1 the items' JSON, then the fence's parameters
// (lease name, holder, epoch, lease lock resource, lock timeout). It throws
// 51001 when the lease lock is not granted and 51000 when the fence does
// not hold; XACT_ABORT then rolls everything back.
func (b fencedBatch) sql() string {
	var with, keyed, read []string
	for _, c := range b.cols {
		jsonType, inner, outer := c.sqlType, "j."+c.name, "k."+c.name
		if c.text {
			jsonType = "nvarchar(max)"
			if c.sqlType == "nvarchar(max)" {
				inner = longJSONTextSQL("j", c.name)
			}
			inner = fmt.Sprintf("%s COLLATE Latin1_General_100_BIN2 AS %s", inner, c.name)
			outer = fmt.Sprintf("CAST(%s AS %s) AS %s", jsonTextSQL("k."+c.name), c.sqlType, c.name)
		}
		with = append(with, fmt.Sprintf("%s %s '$.%s'", c.name, jsonType, c.name))
		keyed = append(keyed, inner)
		read = append(read, outer)
	}
	with = append(with, "long int '$.long'")
	items := fmt.Sprintf(`(SELECT %s
      FROM (SELECT %s
            FROM OPENJSON(CAST($1 AS nvarchar(max))) WITH (%s) AS j) AS k) AS v`,
		strings.Join(read, ", "), strings.Join(keyed, ", "), strings.Join(with, ", "))
	return `SET NOCOUNT ON;
SET XACT_ABORT ON;
DECLARE @holder_id varchar(128) = CAST($3 AS varchar(128)), @lease_epoch bigint = CAST($4 AS bigint),
    @lock_status int, @now datetime2(7);
BEGIN TRANSACTION;
EXEC @lock_status = sp_getapplock @Resource = $5, @LockMode = 'Shared', @LockOwner = 'Transaction', @LockTimeout = $6;
IF @lock_status < 0 THROW 51001, N'the lease lock was not granted', 1;
IF NOT EXISTS (SELECT 1 FROM submission_manager_leases
    WHERE lease_name = CAST($2 AS varchar(64)) AND holder_id = @holder_id
      AND lease_epoch = @lease_epoch AND expires_at > SYSUTCDATETIME())
    THROW 51000, N'fenced: the lease is not held at this epoch', 1;
SET @now = SYSUTCDATETIME();
` + strings.ReplaceAll(b.body, "FROM ITEMS", "FROM "+items)
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
// every intent update. The statements that match items to the updated rows
// give both sides the binary collation (small sets, no index needed).
var startAttempts = newFencedBatch(
	[]batchColumn{
		{"ord", "int", false}, {"intent_id", "nvarchar(255)", true}, {"attempt_number", "int", false},
		{"started_at", "datetime2(7)", false},
	},
	`DECLARE @started TABLE (intent_id nvarchar(255) NOT NULL);
UPDATE submission_intents
SET attempt_count = submission_intents.attempt_count + 1,
    last_modified_at = CASE WHEN @now > submission_intents.last_modified_at THEN @now
                            ELSE DATEADD(nanosecond, 100, submission_intents.last_modified_at) END
OUTPUT inserted.intent_id INTO @started (intent_id)
FROM ITEMS
WHERE submission_intents.intent_id = v.intent_id
  AND submission_intents.status = 'pending'
  AND submission_intents.attempt_count = v.attempt_number - 1;
INSERT INTO submission_attempts (intent_id, attempt_number, holder_id, lease_epoch, started_at, sent)
SELECT v.intent_id, v.attempt_number, @holder_id, @lease_epoch, v.started_at, 1
FROM ITEMS
WHERE v.intent_id IN (SELECT s.intent_id COLLATE Latin1_General_100_BIN2 FROM @started AS s);
COMMIT TRANSACTION;
SELECT v.ord,
       CASE WHEN v.intent_id IN (SELECT s.intent_id COLLATE Latin1_General_100_BIN2 FROM @started AS s) THEN 0
            WHEN EXISTS (SELECT 1 FROM submission_intents AS t WHERE t.intent_id = v.intent_id) THEN 1
            ELSE 2 END
FROM ITEMS;`)

// finishAttempts closes attempts and applies their decisions. An item
// applies only while its intent is pending at attempt count number and
// that attempt is open. The intent row is updated before the attempt row,
// the order startAttempts uses, so the two never deadlock each other.
var finishAttempts = newFencedBatch(
	[]batchColumn{
		{"ord", "int", false}, {"intent_id", "nvarchar(255)", true}, {"attempt_number", "int", false},
		{"finished_at", "datetime2(7)", false}, {"outcome_status", "varchar(16)", false},
		{"outcome_reason", "nvarchar(max)", true}, {"message_id", "nvarchar(max)", true},
		{"error", "nvarchar(max)", true}, {"sent", "bit", false}, {"status", "varchar(16)", false},
		{"next_due_at", "datetime2(7)", false}, {"final_outcome_status", "varchar(16)", false},
		{"final_outcome_reason", "nvarchar(max)", true}, {"final_message_id", "nvarchar(max)", true},
		{"exhausted_reason", "varchar(32)", false}, {"possibly_accepted", "bit", false},
		{"accepted_after_deadline", "bit", false}, {"accepted_message_id", "nvarchar(max)", true},
	},
	`DECLARE @applied TABLE (intent_id nvarchar(255) NOT NULL);
UPDATE submission_intents
SET status = v.status,
    next_due_at = v.next_due_at,
    final_outcome_status = v.final_outcome_status,
    final_outcome_reason = v.final_outcome_reason,
    final_message_id = v.final_message_id,
    exhausted_reason = v.exhausted_reason,
    possibly_accepted = CASE WHEN v.possibly_accepted = 1 THEN 1 ELSE submission_intents.possibly_accepted END,
    accepted_after_deadline = v.accepted_after_deadline,
    accepted_message_id = v.accepted_message_id,
    last_modified_at = CASE WHEN @now > submission_intents.last_modified_at THEN @now
                            ELSE DATEADD(nanosecond, 100, submission_intents.last_modified_at) END
OUTPUT inserted.intent_id INTO @applied (intent_id)
FROM ITEMS
WHERE submission_intents.intent_id = v.intent_id
  AND submission_intents.status = 'pending'
  AND submission_intents.attempt_count = v.attempt_number
  AND EXISTS (SELECT 1 FROM submission_attempts AS a
              WHERE a.intent_id = submission_intents.intent_id AND a.attempt_number = v.attempt_number
                AND a.finished_at IS NULL);
UPDATE submission_attempts
SET finished_at = v.finished_at,
    outcome_status = v.outcome_status,
    outcome_reason = v.outcome_reason,
    message_id = v.message_id,
    error = v.error,
    sent = v.sent
FROM ITEMS
WHERE submission_attempts.intent_id = v.intent_id
  AND submission_attempts.attempt_number = v.attempt_number
  AND submission_attempts.intent_id IN (SELECT s.intent_id COLLATE Latin1_General_100_BIN2 FROM @applied AS s);
COMMIT TRANSACTION;
SELECT v.ord,
       CASE WHEN v.intent_id IN (SELECT s.intent_id COLLATE Latin1_General_100_BIN2 FROM @applied AS s) THEN 0
            WHEN EXISTS (SELECT 1 FROM submission_intents AS t WHERE t.intent_id = v.intent_id) THEN 1
            ELSE 2 END
FROM ITEMS;`)

// startItem is one reservation in startAttempts' JSON.
type startItem struct {
	Ord           int    `json:"ord"`
	IntentID      string `json:"intent_id"`
	AttemptNumber int32  `json:"attempt_number"`
	StartedAt     string `json:"started_at"`
}

func startItemOf(ord int, p ports.StartAttemptParams, n int32) any {
	return startItem{Ord: ord, IntentID: jsonText(p.IntentID), AttemptNumber: n, StartedAt: datetime2JSON(p.StartedAt)}
}

// finishItem is one result in finishAttempts' JSON; an absent member is
// NULL, and so is an empty text.
type finishItem struct {
	Ord                int    `json:"ord"`
	IntentID           string `json:"intent_id"`
	AttemptNumber      int32  `json:"attempt_number"`
	FinishedAt         string `json:"finished_at"`
	OutcomeStatus      string `json:"outcome_status,omitempty"`
	OutcomeReason      string `json:"outcome_reason,omitempty"`
	MessageID          string `json:"message_id,omitempty"`
	Error              string `json:"error,omitempty"`
	Sent               int    `json:"sent"`
	Status             string `json:"status"`
	NextDueAt          string `json:"next_due_at,omitempty"`
	FinalOutcomeStatus string `json:"final_outcome_status,omitempty"`
	FinalOutcomeReason string `json:"final_outcome_reason,omitempty"`
	FinalMessageID     string `json:"final_message_id,omitempty"`
	ExhaustedReason    string `json:"exhausted_reason,omitempty"`
	PossiblyAccepted   int    `json:"possibly_accepted"`
	// AcceptedAfterDeadline and AcceptedMessageID keep an acceptance the
	// deadline made too late to count (core.Decision).
	AcceptedAfterDeadline int    `json:"accepted_after_deadline"`
	AcceptedMessageID     string `json:"accepted_message_id,omitempty"`
	// Long is the item's position in the batch when one of its texts is
	// too long for OPENJSON's WITH on Babelfish (jsonTextLong).
	Long *int `json:"long,omitempty"`
}

// finishItemOf builds one result's item from parameters that passed
// Validate: the attempt's outcome or error, and the decision.
func finishItemOf(ord, at int, p ports.FinishAttemptParams, n int32) any {
	d := p.Decision
	it := finishItem{Ord: ord, IntentID: jsonText(p.IntentID), AttemptNumber: n, FinishedAt: datetime2JSON(p.FinishedAt),
		Error: jsonText(p.Error), Sent: bit(p.Sent), Status: string(d.Status),
		ExhaustedReason: string(d.ExhaustedReason), PossiblyAccepted: bit(d.PossiblyAccepted),
		AcceptedAfterDeadline: bit(d.AcceptedAfterDeadline), AcceptedMessageID: jsonText(d.AcceptedMessageID)}
	if o := p.Outcome; o != nil {
		it.OutcomeStatus, it.OutcomeReason, it.MessageID = string(o.Status), jsonText(o.Reason), jsonText(o.MessageID)
	}
	if o := d.FinalOutcome; o != nil {
		it.FinalOutcomeStatus, it.FinalOutcomeReason, it.FinalMessageID = string(o.Status), jsonText(o.Reason), jsonText(o.MessageID)
	}
	if !d.NextDueAt.IsZero() {
		it.NextDueAt = datetime2JSON(d.NextDueAt)
	}
	if jsonTextLong(it.OutcomeReason, it.MessageID, it.Error, it.FinalOutcomeReason, it.FinalMessageID, it.AcceptedMessageID) {
		it.Long = &at
	}
	return it
}

// bit is a JSON bit: 1 or 0.
func bit(b bool) int {
	if b {
		return 1
	}
	return 0
}

// datetime2JSON writes a time as OPENJSON converts it to datetime2(7): ISO
// 8601 in UTC without an offset, to 100 ns.
func datetime2JSON(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.9999999")
}

// StartAttempt reserves one attempt: a batch of one.
func (s *store) StartAttempt(ctx context.Context, p ports.StartAttemptParams) error {
	return s.StartAttempts(ctx, []ports.StartAttemptParams{p})[0]
}

// FinishAttempt closes one attempt: a batch of one.
func (s *store) FinishAttempt(ctx context.Context, p ports.FinishAttemptParams) error {
	return s.FinishAttempts(ctx, []ports.FinishAttemptParams{p})[0]
}

// StartAttempts reserves a batch of attempts in one fenced round trip.
func (s *store) StartAttempts(ctx context.Context, ps []ports.StartAttemptParams) []error {
	errs := ports.ValidateStarts(ps)
	s.writeBatch(ctx, "start attempts", startAttempts, errs, len(ps),
		func(i int) core.Fence { return ps[i].Fence },
		func(i int) (string, int) { return ps[i].IntentID, ps[i].Number },
		func(i, _ int, n int32) any { return startItemOf(i, ps[i], n) },
		func(i int) string { return fmt.Sprintf("is not pending at attempt count %d", ps[i].Number-1) })
	return errs
}

// FinishAttempts closes a batch of attempts and applies their decisions in
// one fenced round trip.
func (s *store) FinishAttempts(ctx context.Context, ps []ports.FinishAttemptParams) []error {
	errs := ports.ValidateFinishes(ps)
	s.writeBatch(ctx, "finish attempts", finishAttempts, errs, len(ps),
		func(i int) core.Fence { return ps[i].Fence },
		func(i int) (string, int) { return ps[i].IntentID, ps[i].Number },
		func(i, at int, n int32) any { return finishItemOf(i, at, ps[i], n) },
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
	fenceOf func(i int) core.Fence, key func(i int) (string, int), item func(i, at int, number int32) any,
	notRunnable func(i int) string) {
	var (
		fence core.Fence
		items []any
		ords  []int
	)
	for i := range n {
		if errs[i] != nil {
			errs[i] = fmt.Errorf("sqlserver: %w", errs[i])
			continue
		}
		if len(items) == 0 {
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
		items = append(items, item(i, len(items), num))
		ords = append(ords, i)
	}
	if len(items) == 0 {
		return
	}
	var verdicts map[int]int
	err := validateLeaseNames(fence.LeaseName, fence.HolderID)
	if err == nil {
		err = s.db.retryDeadlocks(ctx, func() (err error) {
			verdicts, err = s.runFencedBatch(ctx, b, fence, items)
			return err
		})
	}
	for _, i := range ords {
		id, _ := key(i)
		switch v, ok := verdicts[i]; {
		case err != nil:
			errs[i] = fmt.Errorf("sqlserver: %s: %w", op, err)
		case !ok:
			errs[i] = fmt.Errorf("%w: sqlserver: %s: no verdict for intent %q", core.ErrStoreUnavailable, op, id)
		case v == verdictNotRunnable:
			errs[i] = fmt.Errorf("%w: intent %q %s", core.ErrIntentNotRunnable, id, notRunnable(i))
		case v == verdictNotFound:
			errs[i] = fmt.Errorf("%w: %q", core.ErrIntentNotFound, id)
		}
	}
}

// runFencedBatch sends one request of b for items and reads its verdicts
// by ord.
func (s *store) runFencedBatch(ctx context.Context, b fencedBatch, f core.Fence, items []any) (map[int]int, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(items); err != nil {
		return nil, fmt.Errorf("encode batch: %w", err)
	}
	ms := int32(min(s.db.cfg.LeaseLockTimeout.Milliseconds(), math.MaxInt32))
	res, err := s.db.queries.QueryContext(ctx, b.text, setString(buf.String()), f.LeaseName, f.HolderID, f.Epoch,
		setString(leaseLockPrefix+f.LeaseName), ms)
	if err != nil {
		return nil, mapError(err)
	}
	defer res.Close()
	verdicts := make(map[int]int, len(items))
	for res.Next() {
		var ord, v int
		if err := res.Scan(&ord, &v); err != nil {
			return nil, mapError(err)
		}
		verdicts[ord] = v
	}
	return verdicts, mapError(res.Err())
}

package sqlserver

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The executor's reservations and results travel as batches, each one
// call of a stored procedure (migration 00014, rewritten by 00017, 00018
// and 00022 for what it cost Babelfish), one round trip, or on Babelfish
// one call for every 64 items (engine.callItems). A call takes the lease
// lock in Shared mode and checks the fence once (fence.go), writes every
// runnable item with set-based statements in one transaction, and answers
// which items it wrote and which have no intent. The items travel as one
// JSON parameter (jsontext.go says why, and how its strings survive
// Babelfish); each carries its position in the batch ("ord"), by which its
// verdict comes back. They are procedures, not statements sent as text,
// because Babelfish parses a request's text at every execution and these
// texts ran to tens of kilobytes; TestHandWrittenSQLIsTSQL parses the
// calls, TestMigrationsAreTSQL the procedures.

// fencedBatch is one kind of fenced batch: the call of its procedure, $1
// the items' JSON, then the fence's parameters (lease name, holder, epoch,
// lease lock resource, lock timeout). The procedure throws 51001 when the
// lease lock is not granted and 51000 when the fence does not hold;
// XACT_ABORT then rolls everything back.
type fencedBatch struct {
	text string
	// lane is the executor's pool the batch runs on (exec_pool.go).
	lane lane
}

// newFencedBatch is the batch kind whose procedure is named procedure,
// run on the lane l.
func newFencedBatch(procedure string, l lane) fencedBatch {
	return fencedBatch{text: "EXEC " + procedure + ` @items = $1, @lease_name = $2, @holder_id = $3,
    @lease_epoch = $4, @lock_resource = $5, @lock_timeout = $6`, lane: l}
}

// The verdicts of a batch's items.
const (
	verdictApplied     = 0
	verdictNotRunnable = 1
	verdictNotFound    = 2
)

// startAttempts reserves attempts (dbo.submission_start_attempts).
var startAttempts = newFencedBatch("dbo.submission_start_attempts", laneReservations)

// finishAttempts closes attempts and applies their decisions
// (dbo.submission_finish_attempts).
var finishAttempts = newFencedBatch("dbo.submission_finish_attempts", laneResults)

// startItem is one reservation in startAttempts' JSON.
type startItem struct {
	Ord           int    `json:"ord"`
	IntentID      string `json:"intent_id"`
	AttemptNumber int32  `json:"attempt_number"`
	StartedAt     string `json:"started_at"`
	Spelled       int    `json:"spelled,omitempty"`
}

func startItemOf(ord int, p ports.StartAttemptParams, n int32) any {
	var sp speller
	it := startItem{Ord: ord, IntentID: sp.text(p.IntentID), AttemptNumber: n, StartedAt: datetime2JSON(p.StartedAt)}
	it.Spelled = sp.flag()
	return it
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
	Spelled               int    `json:"spelled,omitempty"`
	// Long is the item's position in the batch when one of its texts is
	// too long for OPENJSON's WITH on Babelfish (jsonTextLong).
	Long *int `json:"long,omitempty"`
}

// finishItemOf builds one result's item from parameters that passed
// Validate: the attempt's outcome or error, and the decision.
func finishItemOf(ord, at int, p ports.FinishAttemptParams, n int32) any {
	d := p.Decision
	var sp speller
	it := finishItem{Ord: ord, IntentID: sp.text(p.IntentID), AttemptNumber: n, FinishedAt: datetime2JSON(p.FinishedAt),
		Error: sp.text(p.Error), Sent: bit(p.Sent), Status: string(d.Status),
		ExhaustedReason: string(d.ExhaustedReason), PossiblyAccepted: bit(d.PossiblyAccepted),
		AcceptedAfterDeadline: bit(d.AcceptedAfterDeadline), AcceptedMessageID: sp.text(d.AcceptedMessageID)}
	if o := p.Outcome; o != nil {
		it.OutcomeStatus, it.OutcomeReason, it.MessageID = string(o.Status), sp.text(o.Reason), sp.text(o.MessageID)
	}
	if o := d.FinalOutcome; o != nil {
		it.FinalOutcomeStatus, it.FinalOutcomeReason, it.FinalMessageID = string(o.Status), sp.text(o.Reason), sp.text(o.MessageID)
	}
	it.Spelled = sp.flag()
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
// number the int column cannot hold. The items go in calls of at most the
// engine's callItems, one after another, each with its own answers.
func (s *store) writeBatch(ctx context.Context, op string, b fencedBatch, errs []error, n int,
	fenceOf func(i int) core.Fence, key func(i int) (string, int), item func(i, at int, number int32) any,
	notRunnable func(i int) string) {
	var (
		fence core.Fence
		ords  []int
		nums  []int32
	)
	for i := range n {
		if errs[i] != nil {
			errs[i] = fmt.Errorf("sqlserver: %w", errs[i])
			continue
		}
		if len(ords) == 0 {
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
		ords, nums = append(ords, i), append(nums, num)
	}
	if len(ords) == 0 {
		return
	}
	if err := validateLeaseNames(fence.LeaseName, fence.HolderID); err != nil {
		for _, i := range ords {
			errs[i] = fmt.Errorf("sqlserver: %s: %w", op, err)
		}
		return
	}
	size := cmp.Or(s.db.engine.callItems, len(ords))
	for from := 0; from < len(ords); from += size {
		call := ords[from:min(from+size, len(ords))]
		items := make([]any, len(call))
		for at, i := range call {
			items[at] = item(i, at, nums[from+at])
		}
		var verdicts map[int]int
		err := s.db.retryDeadlocks(ctx, func() (err error) {
			verdicts, err = s.runFencedBatch(ctx, b, fence, items, call)
			return err
		})
		for _, i := range call {
			id, _ := key(i)
			// verdictsOf gives every position of the call a verdict.
			switch v := verdicts[i]; {
			case err != nil:
				errs[i] = fmt.Errorf("sqlserver: %s: %w", op, err)
			case v == verdictNotRunnable:
				errs[i] = fmt.Errorf("%w: intent %q %s", core.ErrIntentNotRunnable, id, notRunnable(i))
			case v == verdictNotFound:
				errs[i] = fmt.Errorf("%w: %q", core.ErrIntentNotFound, id)
			}
		}
	}
}

// runFencedBatch sends one request of b for items on its lane of the
// executor's pools and reads its verdicts by ord.
func (s *store) runFencedBatch(ctx context.Context, b fencedBatch, f core.Fence, items []any, ords []int) (map[int]int, error) {
	text, err := itemsJSON(items)
	if err != nil {
		return nil, err
	}
	s.db.stats.unpinned(ctx)
	verdicts, err := s.db.runFencedBatchOn(ctx, s.db.lanes[b.lane], b, f, text, ords)
	applied := 0
	for _, v := range verdicts {
		if v == verdictApplied {
			applied++
		}
	}
	s.db.stats.wroteAttempts(applied)
	return verdicts, err
}

// itemsJSON is a batch's items as its procedure reads them (procedureJSON).
func itemsJSON(items []any) (string, error) {
	text, err := procedureJSON(items)
	if err != nil {
		return "", fmt.Errorf("encode batch: %w", err)
	}
	return text, nil
}

// procedureJSON is v as JSON for a procedure's OPENJSON: with no HTML
// escaping, which OPENJSON would only have to undo.
func procedureJSON(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// runFencedBatchOn sends one request of b for the items' JSON on q and
// reads its verdicts for the items at the positions ords. The procedure
// answers one row: the positions of the items it applied and of those
// whose intent does not exist, each as ",0,3," or NULL for none
// (migration 00022); every other item of the batch was not runnable.
func (db *DB) runFencedBatchOn(ctx context.Context, q querier, b fencedBatch, f core.Fence, items string, ords []int) (map[int]int, error) {
	res, err := q.QueryContext(ctx, b.text, setString(items), f.LeaseName, f.HolderID, f.Epoch,
		setString(db.locks.lease(f.LeaseName)), lockTimeoutMillis(db.cfg.LeaseLockTimeout))
	if err != nil {
		return nil, mapError(err)
	}
	defer res.Close()
	if !res.Next() {
		if err := res.Err(); err != nil {
			return nil, mapError(err)
		}
		return nil, fmt.Errorf("%w: sqlserver: a batch answered no verdicts", core.ErrStoreUnavailable)
	}
	var applied, missing sql.NullString
	if err := res.Scan(&applied, &missing); err != nil {
		return nil, mapError(err)
	}
	return verdictsOf(ords, applied.String, missing.String)
}

// verdictsOf is each position of ords' verdict from a batch's answer:
// applied when applied lists it, not found when missing does, and not
// runnable otherwise. A listed position the batch does not hold is an
// answer the adapter cannot trust, and so an error.
func verdictsOf(ords []int, applied, missing string) (map[int]int, error) {
	verdicts := make(map[int]int, len(ords))
	for _, ord := range ords {
		verdicts[ord] = verdictNotRunnable
	}
	for _, answer := range []struct {
		list    string
		verdict int
	}{{applied, verdictApplied}, {missing, verdictNotFound}} {
		for field := range strings.SplitSeq(strings.Trim(answer.list, ","), ",") {
			if field == "" {
				continue
			}
			ord, err := strconv.Atoi(field)
			if _, ok := verdicts[ord]; err != nil || !ok {
				return nil, fmt.Errorf("%w: sqlserver: a batch answered position %q, which it does not hold", core.ErrStoreUnavailable, field)
			}
			verdicts[ord] = answer.verdict
		}
	}
	return verdicts, nil
}

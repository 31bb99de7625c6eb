package sqlserver

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The executor's reservations and results travel as batches, each one
// call of a stored procedure (migration 00014, rewritten by 00017, 00018,
// 00022 and 00023 for what it cost Babelfish), one round trip, or on
// Babelfish one call for every 64 items (engine.callItems). A call takes
// the lease lock in Shared mode and checks the fence once (fence.go),
// writes every runnable item with set-based statements in one
// transaction, and answers which items it wrote and which have no intent.
// The items travel as one parameter of rows of text (attempts_rows.go);
// each carries its position in the batch ("ord"), by which its verdict
// comes back. They are procedures, not statements sent as text,
// because Babelfish parses a request's text at every execution and these
// texts ran to tens of kilobytes; TestHandWrittenSQLIsTSQL parses the
// calls, TestMigrationsAreTSQL the procedures.

// fencedBatch is one kind of fenced batch: the call of its procedure, $1
// the items' rows, then the fence's parameters (lease name, holder, epoch,
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
		func(w *batchRows, i int, n int32) { w.start(i, ps[i], n) },
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
		func(w *batchRows, i int, n int32) { w.finish(i, ps[i], n) },
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
	fenceOf func(i int) core.Fence, key func(i int) (string, int), row func(w *batchRows, i int, number int32),
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
		var rows batchRows
		for at, i := range call {
			row(&rows, i, nums[from+at])
		}
		items, err := rows.String()
		var verdicts map[int]int
		if err == nil {
			err = s.db.retryDeadlocks(ctx, func() (err error) {
				verdicts, err = s.runFencedBatch(ctx, b, fence, items, call)
				return err
			})
		}
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

// runFencedBatch sends one request of b for the items' rows on its lane
// of the executor's pools and reads its verdicts by ord.
func (s *store) runFencedBatch(ctx context.Context, b fencedBatch, f core.Fence, items string, ords []int) (map[int]int, error) {
	s.db.stats.unpinned(ctx)
	verdicts, err := s.db.runFencedBatchOn(ctx, s.db.lanes[b.lane], b, f, items, ords)
	applied := 0
	for _, v := range verdicts {
		if v == verdictApplied {
			applied++
		}
	}
	s.db.stats.wroteAttempts(applied)
	return verdicts, err
}

// runFencedBatchOn sends one request of b for the items' rows on q and
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

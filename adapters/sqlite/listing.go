package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The listing is written here rather than by sqlc: its filters combine
// freely (status, target, the possibly-accepted and accepted-after-deadline
// facts, an intentId prefix, a creation range, the latest attempt's text) and it pages both ways, so
// each combination would be a query of its own. listIntentsSQL writes the
// one statement a combination needs, from fixed fragments with every
// value a parameter, so that SQLite plans each shape on its own.
// TestQueryPlansUseIndexes checks the plan of every shape it can take.

// listIntentColumns are the columns of sqlitedb.SubmissionIntent, in its
// field order.
const listIntentColumns = `intent_id, submission_target, payload, contract, gateway_type, mode, status, created_at,
       next_due_at, attempt_count, final_outcome_status, final_outcome_reason, final_message_id,
       exhausted_reason, last_modified_at, not_before, possibly_accepted, accepted_after_deadline,
       accepted_message_id, trace_parent`

// listingIndex is the index whose order walks the listing, newest first
// (or backwards, oldest first), with its leading filter as an equality so
// the walk stays inside the filter. The intents with a fact kept beside
// their status (accepted after the deadline, possibly accepted) are few,
// so the partial index of the fact wins whatever else is asked. Status and
// target together are left to the planner, as either index serves them.
func listingIndex(p ports.ListIntentsParams) string {
	switch {
	case p.AcceptedAfterDeadline:
		return "submission_intents_accepted_after_deadline"
	case p.PossiblyAccepted:
		return "submission_intents_possibly_accepted"
	case p.Status != "" && p.SubmissionTarget != "":
		return ""
	case p.Status != "":
		return "submission_intents_status_created"
	case p.SubmissionTarget != "":
		return "submission_intents_target_created"
	default:
		return "submission_intents_created"
	}
}

// listIntentsSQL writes the listing for p and its arguments. The
// intentId prefix and the latest attempt's text are tested on the rows the
// index walk meets: the prefix with instr (no wildcard to escape), the
// latest attempt by its primary key (intent_id, attempt_count), never by
// reading an intent's other attempts. The walk stops at the page's limit.
func listIntentsSQL(p ports.ListIntentsParams) (string, []any) {
	var b strings.Builder
	var args []any
	keyword := "\nWHERE "
	cond := func(sql string, values ...any) {
		b.WriteString(keyword + sql)
		keyword = "\n  AND "
		args = append(args, values...)
	}
	b.WriteString("SELECT " + listIntentColumns + "\nFROM submission_intents")
	if index := listingIndex(p); index != "" {
		b.WriteString(" INDEXED BY " + index)
	}
	// The facts are literals, as the partial indexes' WHERE clauses are, so
	// that SQLite can use those indexes.
	if p.AcceptedAfterDeadline {
		cond("accepted_after_deadline = 1")
	}
	if p.PossiblyAccepted {
		cond("possibly_accepted = 1")
	}
	if p.Status != "" {
		cond("status = ?", string(p.Status))
	}
	if p.SubmissionTarget != "" {
		cond("submission_target = ?", p.SubmissionTarget)
	}
	if !p.CreatedFrom.IsZero() {
		cond("created_at >= ?", clampedNanos(p.CreatedFrom))
	}
	if !p.CreatedBefore.IsZero() {
		cond("created_at < ?", clampedNanos(p.CreatedBefore))
	}
	order := "DESC"
	switch {
	case p.After != nil:
		cond("(created_at, intent_id) > (?, ?)", nanos(p.After.CreatedAt), p.After.IntentID)
		order = "ASC"
	case p.Before != nil:
		cond("(created_at, intent_id) < (?, ?)", nanos(p.Before.CreatedAt), p.Before.IntentID)
	}
	if p.IntentIDPrefix != "" {
		cond("instr(intent_id, ?) = 1", p.IntentIDPrefix)
	}
	if p.LastResult != "" {
		// lower() folds ASCII letters only, as asciiLower does. The
		// LIMIT keeps SQLite from turning the EXISTS into a join, for which
		// it may fill a Bloom filter from every attempt first.
		fragment := asciiLower(p.LastResult)
		cond(`EXISTS (
    SELECT 1 FROM submission_attempts AS a
    WHERE a.intent_id = submission_intents.intent_id
      AND a.attempt_number = submission_intents.attempt_count
      AND (instr(lower(a.outcome_status), ?) > 0 OR instr(lower(a.outcome_reason), ?) > 0
           OR instr(lower(a.error), ?) > 0)
    LIMIT 1)`, fragment, fragment, fragment)
	}
	fmt.Fprintf(&b, "\nORDER BY created_at %s, intent_id %s\nLIMIT ?", order, order)
	args = append(args, int64(p.Limit))
	return b.String(), args
}

// listIntentRows runs the listing in the read transaction tx and returns
// its rows newest first.
func listIntentRows(ctx context.Context, tx *sql.Tx, p ports.ListIntentsParams) ([]sqlitedb.SubmissionIntent, error) {
	query, args := listIntentsSQL(p)
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sqlitedb.SubmissionIntent
	for rows.Next() {
		var r sqlitedb.SubmissionIntent
		if err := rows.Scan(&r.IntentID, &r.SubmissionTarget, &r.Payload, &r.Contract, &r.GatewayType, &r.Mode,
			&r.Status, &r.CreatedAt, &r.NextDueAt, &r.AttemptCount, &r.FinalOutcomeStatus, &r.FinalOutcomeReason,
			&r.FinalMessageID, &r.ExhaustedReason, &r.LastModifiedAt, &r.NotBefore, &r.PossiblyAccepted,
			&r.AcceptedAfterDeadline, &r.AcceptedMessageID, &r.TraceParent); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if p.After != nil {
		// Read oldest first from After; the listing is newest first.
		slices.Reverse(out)
	}
	return out, nil
}

// clampedNanos is nanos for a bound that may lie outside the int64
// nanoseconds a stored time has: beyond either end it is the end, which
// selects exactly what the bound does, as no stored time lies there.
func clampedNanos(t time.Time) int64 {
	switch {
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// asciiLower lowers ASCII letters and leaves every other byte as it is:
// what SQLite's lower() does without the ICU extension.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// listIntents is Store.ListIntents for the store.
func (s *store) listIntents(ctx context.Context, p ports.ListIntentsParams) ([]core.Intent, error) {
	if p.Limit < 1 {
		return nil, fmt.Errorf("sqlite: list intents: limit %d is below 1", p.Limit)
	}
	var intents []core.Intent
	err := s.db.readTx(ctx, "list intents", func(ctx context.Context, tx *sql.Tx, q *sqlitedb.Queries) error {
		rows, err := listIntentRows(ctx, tx, p)
		if err != nil {
			return err
		}
		intents, err = intentsWithAttempts(ctx, q, rows)
		return err
	})
	return intents, err
}

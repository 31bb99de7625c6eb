package sqlserver

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The listing is written here rather than by sqlc: its filters combine
// freely (status, target, the possibly-accepted and accepted-after-deadline
// facts, an intentId prefix, a creation range, the latest attempt's text) and it pages both ways, so
// each combination would be a query of its own, and optional predicates
// ("@p = '' OR ...") would share one plan that seeks no index well.
// listIntentsSQL writes the statement a combination needs from fixed
// fragments, every value a parameter, so SQL Server caches one plan per
// shape. TestHandWrittenSQLIsTSQL parses its shapes.
//
// Parameters keep the columns' types, so that no predicate converts a
// column and loses its seek: status as varchar(16), the target as
// nvarchar(255), times as datetime2(7). Strings travel as nvarchar(max)
// (setString), so a plan does not depend on their lengths.

// minDatetime2 is datetime2's first instant: a lower bound before it is
// the same as no bound, and the driver cannot send it.
var minDatetime2 = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)

// listIntentsSQL writes the listing for p and its arguments. The rows come
// in index order from the position: newest first, or oldest first after
// p.After. Under the row goal of FETCH NEXT, the optimizer walks an index
// whose order is the listing's (ix_submission_intents_created, or the
// status, target, possibly-accepted or accepted-after-deadline one with its
// filter as the seek prefix or the index's own filter, and the creation
// range and position as its range) and tests the intentId prefix and the
// latest attempt's text on the rows it meets; the latest attempt is found
// by its primary key (intent_id, attempt_count).
func listIntentsSQL(p ports.ListIntentsParams) (string, []any) {
	var b strings.Builder
	var args []any
	param := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	keyword := "\nWHERE "
	cond := func(sql string) {
		b.WriteString(keyword + sql)
		keyword = "\n  AND "
	}
	b.WriteString("SELECT " + detailedIntentColumns + "\nFROM submission_intents")
	// The facts are literals, as the filtered indexes' WHERE clauses are,
	// so that the optimizer can match those indexes; a parameter would not.
	if p.AcceptedAfterDeadline {
		cond("accepted_after_deadline = 1")
	}
	if p.PossiblyAccepted {
		cond("possibly_accepted = 1")
	}
	if p.Status != "" {
		cond("status = CAST(" + param(string(p.Status)) + " AS varchar(16))")
	}
	if p.SubmissionTarget != "" {
		cond("submission_target = CAST(" + param(setString(p.SubmissionTarget)) + " AS nvarchar(255))")
	}
	if !p.CreatedFrom.IsZero() {
		cond("created_at >= CAST(" + param(clampedTime(p.CreatedFrom)) + " AS datetime2(7))")
	}
	if !p.CreatedBefore.IsZero() {
		cond("created_at < CAST(" + param(clampedTime(p.CreatedBefore)) + " AS datetime2(7))")
	}
	order := "DESC"
	// (created_at, intent_id) beyond the position, written with a seekable
	// first conjunct.
	switch {
	case p.After != nil:
		t, id := param(dbTime(p.After.CreatedAt)), param(setString(p.After.IntentID))
		cond("created_at >= CAST(" + t + " AS datetime2(7))\n  AND (created_at > CAST(" + t + " AS datetime2(7)) OR intent_id > " + id + ")")
		order = "ASC"
	case p.Before != nil:
		t, id := param(dbTime(p.Before.CreatedAt)), param(setString(p.Before.IntentID))
		cond("created_at <= CAST(" + t + " AS datetime2(7))\n  AND (created_at < CAST(" + t + " AS datetime2(7)) OR intent_id < " + id + ")")
	}
	if p.IntentIDPrefix != "" {
		// The column's binary collation makes the match case-sensitive.
		cond("intent_id LIKE " + param(setString(likePrefix(p.IntentIDPrefix))) + " ESCAPE '\\'")
	}
	if p.LastResult != "" {
		fragment := param(setString(p.LastResult))
		cond(`EXISTS (
    SELECT 1 FROM submission_attempts AS a
    WHERE a.intent_id = submission_intents.intent_id
      AND a.attempt_number = submission_intents.attempt_count
      AND (CHARINDEX(LOWER(` + fragment + `), LOWER(a.outcome_status)) > 0
           OR CHARINDEX(LOWER(` + fragment + `), LOWER(a.outcome_reason)) > 0
           OR CHARINDEX(LOWER(` + fragment + `), LOWER(a.error)) > 0))`)
	}
	fmt.Fprintf(&b, "\nORDER BY created_at %s, intent_id %s\nOFFSET 0 ROWS FETCH NEXT %s ROWS ONLY", order, order,
		param(int32(min(p.Limit, math.MaxInt32))))
	return b.String(), args
}

// likePrefix is the LIKE pattern of the intentIds that start with prefix:
// T-SQL's wildcards in it (% _ [) and the escape character are escaped.
func likePrefix(prefix string) string {
	var b strings.Builder
	for _, r := range prefix {
		if r == '\\' || r == '%' || r == '_' || r == '[' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String() + "%"
}

// clampedTime is dbTime for a creation bound, held inside datetime2's
// range: beyond either end it is the end, which selects exactly what the
// bound does, as no stored time lies there.
func clampedTime(t time.Time) time.Time {
	switch {
	case t.Before(minDatetime2):
		return minDatetime2
	case t.After(maxDatetime2):
		return maxDatetime2
	}
	return dbTime(t)
}

// listIntentRows runs the listing and returns its rows newest first. A
// target longer than the column matches nothing and is not sent, as the
// parameter's cast would cut it to another target.
func (s *store) listIntentRows(ctx context.Context, p ports.ListIntentsParams) ([]detailedRow, error) {
	if nvarcharLen(p.SubmissionTarget) > maxKeyLen {
		return nil, nil
	}
	query, args := listIntentsSQL(p)
	rows, err := s.pool.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, mapError(err)
	}
	defer rows.Close()
	var out []detailedRow
	for rows.Next() {
		var l detailedRow
		if err := rows.Scan(detailedRowFields(&l)...); err != nil {
			return nil, mapError(err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, mapError(err)
	}
	if p.After != nil {
		slices.Reverse(out)
	}
	return out, nil
}

// ListIntents returns at most p.Limit intents that match the filters,
// strictly after p.Before (or the nearest before p.After), newest first,
// with their attempts and facts; the service cuts pages.
func (s *store) ListIntents(ctx context.Context, p ports.ListIntentsParams) ([]core.Intent, error) {
	if p.Limit < 1 {
		return nil, fmt.Errorf("sqlserver: list limit %d, want at least 1", p.Limit)
	}
	rows, err := s.listIntentRows(ctx, p)
	if err != nil {
		return nil, err
	}
	intents := make([]core.Intent, 0, len(rows))
	for _, r := range rows {
		intent, err := r.intent()
		if err != nil {
			return nil, err
		}
		intents = append(intents, intent)
	}
	if err := s.attachAttempts(ctx, intents); err != nil {
		return nil, err
	}
	return intents, nil
}

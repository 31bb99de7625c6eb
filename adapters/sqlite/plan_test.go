package sqlite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// planRows is how many intents the plan test fills: "a store with a few
// hundred thousand intents".
const planRows = 200_000

// TestQueryPlansUseIndexes fills a store with planRows intents (and some
// attempts) and checks with EXPLAIN QUERY PLAN that every query the store
// runs finds its rows through an index: a SEARCH, or an ordered index walk
// that its LIMIT stops, never a SCAN of a table or a sort of all rows.
func TestQueryPlansUseIndexes(t *testing.T) {
	if testing.Short() {
		t.Skipf("skipped under -short: fills a %d-row database to check query plans", planRows)
	}
	if raceEnabled {
		t.Skipf("skipped under -race: filling %d rows in race-instrumented SQLite takes minutes, and the test "+
			"has no concurrency for the detector to check; plain `go test` runs it", planRows)
	}
	db := openTestDB(t)
	ctx := context.Background()
	fillStart := time.Now()
	fillIntents(t, db, planRows)
	t.Logf("filled %d intents in %v", planRows, time.Since(fillStart).Round(time.Millisecond))

	now := time.Now().UnixNano()
	fence := []any{"submission-manager-executor", "holder", int64(1)}
	id := "intent-0123456"
	const pk = "sqlite_autoindex_submission_intents_1" // the intent_id primary key
	queries := []planCase{
		{"GetIntent", sqlitedb.GetIntent, []any{id}, true, pk},
		{"ListAttempts", sqlitedb.ListAttempts, []any{id}, true, ""},
		{"ListAttemptsOfIntents", strings.Replace(sqlitedb.ListAttemptsOfIntents, "/*SLICE:intent_ids*/?", "?, ?, ?", 1), []any{id, "b", "c"}, true, ""},
		{"ListPending", sqlitedb.ListPending, []any{id, int64(500)}, true, "submission_intents_pending"},
		{"ListChanged", sqlitedb.ListChanged, []any{now, id, int64(500)}, true, "submission_intents_changed"},
		{"LatestChange", sqlitedb.LatestChange, nil, false, "submission_intents_changed"},
		{"MaxModifiedAt", sqlitedb.MaxModifiedAt, nil, true, "submission_intents_changed"},
		{"MarkAcceptedAfterDeadline", sqlitedb.MarkAcceptedAfterDeadline, []any{"msg-1", id}, true, pk},
		{"InsertIntent", sqlitedb.InsertIntent, []any{"new", "t", []byte("{}"), "{}", "sms", "batch", now, now, now, nil, nil}, true, ""},
		{"StartAttempt", sqlitedb.StartAttempt, append([]any{now, id, int64(1)}, fence...), true, pk},
		{"InsertAttempt", sqlitedb.InsertAttempt, []any{id, int64(1), "holder", int64(1), now}, true, ""},
		{"FinishAttempt", sqlitedb.FinishAttempt, append([]any{now, nil, nil, nil, "err", true, id, int64(1)}, fence...), true, ""},
		{"ApplyDecision", sqlitedb.ApplyDecision, []any{"pending", now, nil, nil, nil, nil, now, id, int64(1)}, true, pk},
		{"RescheduleIntent", sqlitedb.RescheduleIntent, append([]any{"pending", now, nil, now, id, int64(1)}, fence...), true, pk},
		{"FenceHolds", sqlitedb.FenceHolds, fence, true, ""},
		{"IntentExists", sqlitedb.IntentExists, []any{id}, true, pk},
		{"AcquireLease", sqlitedb.AcquireLease, []any{"lease", "holder", int64(1)}, true, ""},
		{"RenewLease", sqlitedb.RenewLease, append(fence, int64(1)), true, ""},
		{"ReleaseLease", sqlitedb.ReleaseLease, fence, true, ""},
		{"ReadLease", sqlitedb.ReadLease, []any{"lease"}, true, ""},
	}
	queries = append(queries, listingPlanCases(now, id)...)
	// A production file is never analysed unless an operator does it, and
	// the planner's choices differ without statistics: check both ways.
	t.Run("without statistics", func(t *testing.T) { checkPlans(t, db, queries) })
	if _, err := db.writeDB.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	t.Run("after ANALYZE", func(t *testing.T) { checkPlans(t, db, queries) })
}

// listingPlanCases are the shapes the intents listing takes (listing.go):
// each filter alone, combined, and paged both ways. A first page may walk
// its index from the end (its LIMIT stops it); a continued page or a
// bounded range must seek into it.
func listingPlanCases(now int64, id string) []planCase {
	pos := &ports.IntentPosition{CreatedAt: time.Unix(0, now), IntentID: id}
	from, before := time.Unix(0, 1700000000000000000+50_000*1000000), time.Unix(0, 1700000000000000000+60_000*1000000)
	shapes := []struct {
		name   string
		p      ports.ListIntentsParams
		search bool
		index  string
	}{
		{"ListIntents", ports.ListIntentsParams{}, false, "submission_intents_created"},
		{"ListIntentsNextPage", ports.ListIntentsParams{Before: pos}, true, "submission_intents_created"},
		{"ListIntentsPreviousPage", ports.ListIntentsParams{After: pos}, true, "submission_intents_created"},
		{"ListIntentsByStatus", ports.ListIntentsParams{Status: core.StatusPending, Before: pos}, true, "submission_intents_status_created"},
		{"ListIntentsByStatusFirstPage", ports.ListIntentsParams{Status: core.StatusPending}, true, "submission_intents_status_created"},
		{"ListIntentsByTarget", ports.ListIntentsParams{SubmissionTarget: "target-3", Before: pos}, true, "submission_intents_target_created"},
		{"ListIntentsByStatusAndTarget", ports.ListIntentsParams{Status: core.StatusPending, SubmissionTarget: "target-3", Before: pos}, true, ""},
		{"ListIntentsPossiblyAccepted", ports.ListIntentsParams{PossiblyAccepted: true, Status: core.StatusExhausted}, false, "submission_intents_possibly_accepted"},
		{"ListIntentsPossiblyAcceptedPreviousPage", ports.ListIntentsParams{PossiblyAccepted: true, After: pos}, true, "submission_intents_possibly_accepted"},
		{"ListIntentsAcceptedAfterDeadline", ports.ListIntentsParams{AcceptedAfterDeadline: true}, false, "submission_intents_accepted_after_deadline"},
		{"ListIntentsAcceptedAfterDeadlineNextPage", ports.ListIntentsParams{AcceptedAfterDeadline: true, Status: core.StatusExhausted,
			SubmissionTarget: "target-3", Before: pos}, true, "submission_intents_accepted_after_deadline"},
		{"ListIntentsAcceptedAfterDeadlinePreviousPage", ports.ListIntentsParams{AcceptedAfterDeadline: true, PossiblyAccepted: true,
			After: pos}, true, "submission_intents_accepted_after_deadline"},
		{"ListIntentsAcceptedAfterDeadlineSearched", ports.ListIntentsParams{AcceptedAfterDeadline: true, IntentIDPrefix: "intent-0",
			CreatedFrom: from, CreatedBefore: before, LastResult: "accepted"}, true, "submission_intents_accepted_after_deadline"},
		{"ListIntentsCreatedRange", ports.ListIntentsParams{CreatedFrom: from, CreatedBefore: before}, true, "submission_intents_created"},
		{"ListIntentsByStatusInRange", ports.ListIntentsParams{Status: core.StatusAccepted, CreatedFrom: from, CreatedBefore: before, After: pos}, true, "submission_intents_status_created"},
		{"ListIntentsByTargetSince", ports.ListIntentsParams{SubmissionTarget: "target-3", CreatedFrom: from}, true, "submission_intents_target_created"},
		{"ListIntentsByPrefix", ports.ListIntentsParams{IntentIDPrefix: "intent-01"}, false, "submission_intents_created"},
		{"ListIntentsByPrefixNextPage", ports.ListIntentsParams{IntentIDPrefix: "intent-01", Before: pos}, true, "submission_intents_created"},
		{"ListIntentsByLastResult", ports.ListIntentsParams{LastResult: "Timeout"}, false, "submission_intents_created"},
		{"ListIntentsByStatusAndLastResult", ports.ListIntentsParams{Status: core.StatusPending, LastResult: "timeout", Before: pos}, true, "submission_intents_status_created"},
		{"ListIntentsEveryFilter", ports.ListIntentsParams{Status: core.StatusPending, SubmissionTarget: "target-3", IntentIDPrefix: "intent-0",
			CreatedFrom: from, CreatedBefore: before, LastResult: "timeout", After: pos}, true, ""},
	}
	cases := make([]planCase, len(shapes))
	for i, sh := range shapes {
		sh.p.Limit = 51
		query, args := listIntentsSQL(sh.p)
		cases[i] = planCase{sh.name, query, args, sh.search, sh.index}
	}
	return cases
}

// planCase is one query whose plan is checked.
type planCase struct {
	name   string
	sql    string
	args   []any
	search bool
	index  string
}

// checkPlans runs EXPLAIN QUERY PLAN for every case and fails on a table
// scan, a temporary b-tree or a missing expected index.
func checkPlans(t *testing.T, db *DB, queries []planCase) {
	for _, q := range queries {
		t.Run(q.name, func(t *testing.T) {
			plan := explain(t, db, q.sql, q.args)
			t.Logf("plan:\n  %s", strings.Join(plan, "\n  "))
			// Only a plain INSERT ... VALUES reads nothing and has no plan.
			if len(plan) == 0 && !strings.Contains(q.sql, "INSERT INTO") {
				t.Fatal("empty plan for a query that reads")
			}
			for _, step := range plan {
				if !touchesTable(step) {
					continue
				}
				switch {
				case strings.HasPrefix(step, "SEARCH "):
				case strings.HasPrefix(step, "SCAN ") && strings.Contains(step, " USING ") && strings.Contains(step, "INDEX") && !q.search:
				default:
					t.Errorf("plan step %q is not an index search\nplan:\n  %s", step, strings.Join(plan, "\n  "))
				}
			}
			if q.index != "" && !strings.Contains(strings.Join(plan, "\n"), "INDEX "+q.index) {
				t.Errorf("plan does not use index %s\nplan:\n  %s", q.index, strings.Join(plan, "\n  "))
			}
			for _, step := range plan {
				// A Bloom filter is filled by reading its whole table first.
				if strings.HasPrefix(step, "BLOOM FILTER") {
					t.Errorf("plan reads a whole table into a Bloom filter: %q\nplan:\n  %s", step, strings.Join(plan, "\n  "))
				}
				if strings.Contains(step, "TEMP B-TREE") {
					t.Errorf("plan sorts or deduplicates in a temporary b-tree: %q\nplan:\n  %s", step, strings.Join(plan, "\n  "))
				}
			}
		})
	}
}

func touchesTable(step string) bool {
	for _, table := range []string{"submission_intents", "submission_attempts", "submission_manager_leases"} {
		if strings.Contains(step, " "+table) {
			return true
		}
	}
	return false
}

// explain returns the detail column of EXPLAIN QUERY PLAN for the statement.
func explain(t *testing.T, db *DB, query string, args []any) []string {
	t.Helper()
	rows, err := db.writeDB.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("EXPLAIN QUERY PLAN: %v", err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return steps
}

// fillIntents inserts n intents in one transaction, straight in SQL so that
// filling is quick: three statuses, ten targets, one attempt on every tenth
// intent, distinct creation and change times.
func fillIntents(t *testing.T, db *DB, n int) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.writeDB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const contract = `{"submissionTarget":"t","gatewayType":"sms","gatewayUrl":"http://x","mode":"batch","policy":"one_shot","terminalOutcomes":[]}`
	_, err = tx.ExecContext(ctx, `
		WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < ?)
		INSERT INTO submission_intents (intent_id, submission_target, payload, contract, gateway_type, mode,
			status, created_at, next_due_at, attempt_count, final_outcome_status, exhausted_reason, last_modified_at)
		SELECT printf('intent-%07d', n), 'target-' || (n % 10), CAST('{"n":' || n || '}' AS BLOB), ?, 'sms',
			CASE WHEN n % 2 = 0 THEN 'batch' ELSE 'realtime' END,
			CASE n % 3 WHEN 0 THEN 'pending' WHEN 1 THEN 'accepted' ELSE 'exhausted' END,
			1700000000000000000 + n * 1000000,
			CASE WHEN n % 3 = 0 THEN 1700000000000000000 + n * 1000000 END,
			CASE WHEN n % 10 = 0 THEN 1 ELSE 0 END,
			CASE WHEN n % 3 = 1 THEN 'accepted' END,
			CASE WHEN n % 3 = 2 THEN 'one_shot_completed' END,
			1700000000000000000 + n * 1000
		FROM seq`, n, contract)
	if err != nil {
		t.Fatalf("filling intents: %v", err)
	}
	_, err = tx.ExecContext(ctx, `
		INSERT INTO submission_attempts (intent_id, attempt_number, holder_id, lease_epoch, started_at, finished_at, error)
		SELECT intent_id, 1, 'holder', 1, created_at, created_at + 1000, 'timeout'
		FROM submission_intents WHERE attempt_count = 1`)
	if err != nil {
		t.Fatalf("filling attempts: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

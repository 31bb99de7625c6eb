package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
)

// TestHistoryPlansSeekTheirIndexes checks with EXPLAIN QUERY PLAN that each
// history count reads one range of the index made for it, and the attempt
// errors find their intents by key: a window costs the rows in it, never a
// scan of every intent. Grouping the window's rows needs a temporary
// b-tree, which is bounded by the window, so it is allowed here.
func TestHistoryPlansSeekTheirIndexes(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: fills a database to check query plans")
	}
	db := openTestDB(t)
	fillIntents(t, db, 20_000)
	const from, bucket, to = int64(1700000000000000000), int64(60_000_000_000), int64(1700000000000000000 + 3_600_000_000_000)
	args := []any{from, bucket, to}
	cases := []struct {
		name, sql string
		want      []string
	}{
		{"HistorySubmitted", sqlitedb.HistorySubmitted,
			[]string{"SEARCH submission_intents USING COVERING INDEX submission_intents_created (created_at>? AND created_at<?)"}},
		{"HistoryEnded", sqlitedb.HistoryEnded,
			[]string{"SEARCH submission_intents USING COVERING INDEX submission_intents_ended (last_modified_at>? AND last_modified_at<?)"}},
		{"HistoryAttemptErrors", sqlitedb.HistoryAttemptErrors, []string{
			"SEARCH a USING COVERING INDEX submission_attempts_errors (finished_at>? AND finished_at<?)",
			"SEARCH i USING INDEX sqlite_autoindex_submission_intents_1 (intent_id=?)",
		}},
	}
	check := func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				plan := explain(t, db, c.sql, args)
				t.Logf("plan:\n  %s", strings.Join(plan, "\n  "))
				var reads []string
				for _, step := range plan {
					if strings.HasPrefix(step, "SCAN") || strings.HasPrefix(step, "SEARCH") {
						reads = append(reads, step)
					}
				}
				if strings.Join(reads, "\n") != strings.Join(c.want, "\n") {
					t.Fatalf("reads:\n  %s\nwant:\n  %s", strings.Join(reads, "\n  "), strings.Join(c.want, "\n  "))
				}
			})
		}
	}
	t.Run("without statistics", check)
	if _, err := db.writeDB.ExecContext(context.Background(), "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	t.Run("after ANALYZE", check)
}

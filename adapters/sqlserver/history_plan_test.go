package sqlserver

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestHistoryPlanSeeksItsIndexes asks Babelfish for the plan of the
// history statement on a table of some thousands of intents, and checks
// that each of its three counts reads the index made for it by a range
// condition on its time column: a window costs its own rows, not a scan of
// every intent. SQL Server's optimizer chooses its own plan; the
// migration's comments say why the same indexes serve it, and this test
// states only what the server it runs on shows.
func TestHistoryPlanSeeksItsIndexes(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: fills a database to check a query plan")
	}
	if !serverIsBabelfish(t, adminDB(t)) {
		t.Skip("the plan is read with BABELFISH_SHOWPLAN_ALL, which only Babelfish has")
	}
	// A database of its own: a reused one keeps the planner's statistics
	// of the tests before it (tables emptied, other values), which can
	// make it guess one row and scan a primary key instead, and Babelfish
	// refuses UPDATE STATISTICS. A new database has none to mislead it.
	ctx := context.Background()
	db := openTestDB(t, freshDatabase(t, databaseOptions{}))
	if err := db.Migrate(ctx, "up"); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	// 10,000 intents a second apart from 2026-01-01, every third ended,
	// every tenth with an attempt that failed.
	const digits = "(VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9))"
	fill := `WITH n AS (SELECT a.d * 1000 + b.d * 100 + c.d * 10 + e.d AS i
  FROM ` + digits + ` AS a(d) CROSS JOIN ` + digits + ` AS b(d) CROSS JOIN ` + digits + ` AS c(d) CROSS JOIN ` + digits + ` AS e(d))
INSERT INTO submission_intents (intent_id, submission_target, payload, contract, gateway_type, mode, status,
  created_at, next_due_at, attempt_count, final_outcome_status, last_modified_at)
SELECT CONCAT('intent-', i), CONCAT('target-', i % 10), 0x7b7d, N'{}', 'sms', 'batch',
  CASE WHEN i % 3 = 0 THEN 'accepted' ELSE 'pending' END,
  DATEADD(second, i, CAST('2026-01-01' AS datetime2(7))),
  CASE WHEN i % 3 = 0 THEN NULL ELSE DATEADD(second, i, CAST('2026-01-01' AS datetime2(7))) END,
  CASE WHEN i % 10 = 0 THEN 1 ELSE 0 END,
  CASE WHEN i % 3 = 0 THEN 'accepted' END,
  DATEADD(second, i, CAST('2026-01-01' AS datetime2(7)))
FROM n;
INSERT INTO submission_attempts (intent_id, attempt_number, holder_id, lease_epoch, started_at, finished_at, error, sent)
SELECT intent_id, 1, 'holder', 1, created_at, created_at, N'timeout', 1 FROM submission_intents WHERE attempt_count = 1;`
	if _, err := db.queries.ExecContext(ctx, fill); err != nil {
		t.Fatalf("filling: %v", err)
	}
	conn, err := db.queries.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET BABELFISH_SHOWPLAN_ALL ON"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "SET BABELFISH_SHOWPLAN_ALL OFF") //nolint:errcheck // the connection is closed next
	// A window of five minutes of the 2.8 hours filled (300 intents, 30
	// failed attempts): a window of an hour, a third of the table, was
	// read by a scan once PostgreSQL had statistics, and so it should be.
	// Statistics can come at any moment, since another test's
	// sp_updatestats analyzes every database on the server (statistics.go;
	// it happened in one CI run, and the errors count then hashed all
	// 10,000 intents rather than look up 360). With this window the plan
	// is the same with statistics and without.
	from := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	rows, err := conn.QueryContext(ctx, generatedQueries(t)["history"], from, int32(60), from.Add(5*time.Minute))
	if err != nil {
		t.Fatalf("explaining the history statement: %v", err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	t.Logf("plan:\n%s", text)
	if strings.Contains(text, "Seq Scan") {
		t.Errorf("the plan scans a table")
	}
	// Babelfish adds a hash to each index name; PostgreSQL reads an index
	// as an "Index Scan using" or "Index Only Scan using" it (on the table
	// and its alias, if any) or a "Bitmap Index Scan on" it, and prints its
	// range on the next line.
	for index, column := range map[string]string{"ix_submission_intents_created": "created_at",
		"ix_submission_intents_ended": "last_modified_at", "ix_submission_attempts_errors": "finished_at"} {
		seek := regexp.MustCompile(`(using|on) ` + index + `\S*( on \S+( \S+)?)?\s*\(cost[^\n]*\n\s*Index Cond: \(\(` + column + ` >= `)
		if !seek.MatchString(text) {
			t.Errorf("the plan does not read a range of %s by %s", index, column)
		}
	}
}

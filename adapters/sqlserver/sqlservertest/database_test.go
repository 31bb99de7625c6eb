package sqlservertest

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestDropStaleDatabasesDropsOnlyTheOldOnes creates two databases under a
// pattern of the test's own: an age of an hour drops neither, an age of
// nothing drops both, and no other database is touched (the pattern keeps
// it to this test's, as other test processes share the server).
func TestDropStaleDatabasesDropsOnlyTheOldOnes(t *testing.T) {
	db := Admin(t)
	ctx := context.Background()
	prefix := strings.Replace(NewName(), "sm_test_", "sm_stale_", 1)
	names := []string{prefix + "_a", prefix + "_b"}
	pattern := strings.ReplaceAll(prefix, "_", "[_]") + "%"
	for _, name := range names {
		if err := CreateDatabase(ctx, db, name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = DropDatabase(context.Background(), db, name) })
	}
	count := func() int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sys.databases WHERE name LIKE @p1`, pattern).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := dropStaleDatabases(ctx, db, pattern, time.Hour); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Fatalf("an age of an hour left %d of the 2 new databases; want both", n)
	}
	// create_date has whole seconds: wait past the one they were made in.
	time.Sleep(1100 * time.Millisecond)
	if err := dropStaleDatabases(ctx, db, pattern, 0); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Fatalf("an age of nothing left %d of the 2 databases; want none", n)
	}
}

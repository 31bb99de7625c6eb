package sqlserver

import (
	"database/sql"
	"strings"
	"testing"
	"time"
)

// TestLeaseLocksOfTwoDatabasesAreApart: two databases on one server, each
// with a lease of the same name, do not share its lease lock. On Babelfish,
// whose application locks are server-wide, a takeover in one database
// would otherwise hold up every fenced write of the other (and the tests of
// this package, each on a database of its own, would fence each other).
func TestLeaseLocksOfTwoDatabasesAreApart(t *testing.T) {
	one, _ := migratedDB(t, databaseOptions{})
	other, _ := migratedDB(t, databaseOptions{})
	name := uniqueLeaseName(t, "apart-")
	if one.locks.lease(name) == other.locks.lease(name) {
		t.Fatalf("both databases name the lease lock %q", one.locks.lease(name))
	}
	if !strings.Contains(one.locks.migration(), one.locks.database) {
		t.Errorf("the migration lock %q does not carry the database's name %q", one.locks.migration(), one.locks.database)
	}

	tx, err := one.queries.BeginTx(t.Context(), &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := takeLeaseLock(t.Context(), tx, takeoverLeaseLockSQL, one.locks.lease(name), time.Second); err != nil {
		t.Fatalf("a takeover's lease lock in one database: %v", err)
	}
	if status := lockStatus(t, other, name, "Shared", time.Second); status < 0 {
		t.Errorf("a fenced write's lease lock in another database waited for the takeover in the first (status %d)", status)
	}
	if status := lockStatus(t, one, name, "Shared", 100*time.Millisecond); status >= 0 {
		t.Errorf("a fenced write's lease lock was granted (status %d) beside a takeover's in the same database", status)
	}
}

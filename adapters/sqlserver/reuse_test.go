package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/sqlservertest"
)

// Most tests need only an empty, migrated database. Migrating a new one
// costs about a second on Babelfish (CREATE DATABASE itself a tenth of
// that), which over the suites' hundreds of tests is minutes, so a test
// gets a database another test has finished with, emptied, and gives it
// back when it ends; TestMain drops them all. Tests of the schema itself
// (migrations) and tuned databases use freshDatabase instead.
var reusable struct {
	sync.Mutex
	names []string
	admin *sql.DB // the pool that created them
}

// emptyOrder lists the store's tables children first, so that deleting in
// this order satisfies the foreign keys SQL Server has.
var emptyOrder = []string{"submission_intent_events", "submission_resubmissions", "submission_attempts", "submission_intents",
	"submission_manager_leases", "submission_gateway_pauses", "submission_console_sessions", "submission_console_secrets"}

// reusableDatabase returns the DSN of a database that is the test's until
// it ends: one another test has finished with (fresh=false), or a new one.
func reusableDatabase(t *testing.T) (dsn string, fresh bool) {
	t.Helper()
	admin := adminDB(t)
	reusable.Lock()
	reusable.admin = admin
	var name string
	if n := len(reusable.names); n > 0 {
		name, reusable.names = reusable.names[n-1], reusable.names[:n-1]
	}
	reusable.Unlock()
	if name == "" {
		fresh = true
		name = sqlservertest.NewName()
		if err := sqlservertest.CreateDatabase(context.Background(), admin, name); err != nil {
			t.Fatalf("create test database: %v", err)
		}
	}
	// Given back even when the test fails: the next user empties it first.
	t.Cleanup(func() {
		reusable.Lock()
		reusable.names = append(reusable.names, name)
		reusable.Unlock()
	})
	dsn, err := sqlservertest.DSNWithDatabase(serverDSN(t), name)
	if err != nil {
		t.Fatal(err)
	}
	return dsn, fresh
}

// emptyTables deletes every row of a reused database in one round trip.
func emptyTables(t *testing.T, db *DB) {
	t.Helper()
	var batch strings.Builder
	for _, table := range emptyOrder {
		batch.WriteString("DELETE FROM " + table + ";\n")
	}
	if _, err := db.queries.ExecContext(context.Background(), batch.String()); err != nil {
		t.Fatalf("empty a test database for reuse: %v", err)
	}
}

// dropReusable drops the databases reusableDatabase made.
func dropReusable() {
	reusable.Lock()
	defer reusable.Unlock()
	for _, name := range reusable.names {
		if err := sqlservertest.DropDatabase(context.Background(), reusable.admin, name); err != nil {
			fmt.Fprintf(os.Stderr, "drop test database: %v\n", err)
		}
	}
	reusable.names = nil
}

// TestEmptyOrderCoversTheSchema keeps emptyOrder complete: a table it
// missed would carry rows from one test into the next.
func TestEmptyOrderCoversTheSchema(t *testing.T) {
	if got := slices.Sorted(slices.Values(emptyOrder)); !slices.Equal(got, schemaTables) {
		t.Errorf("emptyOrder holds %v, the schema %v", got, schemaTables)
	}
}

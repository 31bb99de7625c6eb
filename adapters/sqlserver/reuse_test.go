package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
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
	// open are databases that stay open between the conformance suites'
	// cases (suiteDB), with the pools and sessions their cases used.
	open  []openDatabase
	admin *sql.DB // the pool that created them
}

// openDatabase is a reused database with the DB a conformance case left
// open on it.
type openDatabase struct {
	name, dsn string
	db        *DB
}

// emptyOrder lists the store's tables children first, so that deleting in
// this order satisfies the foreign keys SQL Server has.
var emptyOrder = []string{"submission_intent_events", "submission_resubmissions", "submission_attempts", "submission_intents",
	"submission_manager_leases", "submission_gateway_pauses", "submission_console_sessions", "submission_console_secrets",
	"submission_instances"}

// reusableDatabase returns the DSN of a database that is the test's until
// it ends: one another test has finished with (fresh=false), or a new one.
func reusableDatabase(t *testing.T) (dsn string, fresh bool) {
	t.Helper()
	name, fresh := takeDatabase(t)
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

// takeDatabase takes a database no test uses now off the list, or creates
// one (fresh); the caller gives its name back.
func takeDatabase(t *testing.T) (name string, fresh bool) {
	t.Helper()
	admin := adminDB(t)
	reusable.Lock()
	reusable.admin = admin
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
	return name, fresh
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

// suiteDB returns an empty, migrated database for one case of a
// conformance suite, open on the DB an earlier case used when one is free.
// On Babelfish a new session's first statement of each kind costs the
// server a good part of a second (docs/sqlserver.md, "Connections"), and
// that was most of each case's time while every case opened the store
// anew: over half of the package's run (docs/sqlserver.md, "Running the
// SQL Server tests"). The cases hold the store to the port, not to a cold
// start, which the warm-up tests cover; what a case leaves in the DB is
// what a store that runs for long keeps between requests. A case that
// fails closes the DB rather than hand it on, and one that restarts the
// store, which closes it, calls restarted first.
func suiteDB(t *testing.T) (db *DB, dsn string, restarted func()) {
	t.Helper()
	reusable.Lock()
	var kept openDatabase
	if n := len(reusable.open); n > 0 {
		kept, reusable.open = reusable.open[n-1], reusable.open[:n-1]
	}
	reusable.Unlock()
	closed := false
	// Registered before anything can fail, so that the database and its
	// DB are given back or closed whatever happens below.
	t.Cleanup(func() {
		open := kept.db != nil && !closed
		handOn := open && !t.Failed()
		reusable.Lock()
		if handOn {
			reusable.open = append(reusable.open, kept)
		} else if kept.name != "" {
			reusable.names = append(reusable.names, kept.name)
		}
		reusable.Unlock()
		if open && !handOn {
			_ = kept.db.Close()
		}
	})
	restarted = func() { closed = true }
	if kept.db != nil {
		emptyTables(t, kept.db)
		return kept.db, kept.dsn, restarted
	}
	var fresh bool
	kept.name, fresh = takeDatabase(t)
	dsn, err := sqlservertest.DSNWithDatabase(serverDSN(t), kept.name)
	if err != nil {
		t.Fatal(err)
	}
	kept.dsn = dsn
	if kept.db, err = Open(context.Background(), Config{DSN: dsn, Logger: suiteLogger}); err != nil {
		t.Fatalf("Open: %v", err)
	}
	emptyOrMigrate(t, kept.db, fresh)
	return kept.db, kept.dsn, restarted
}

// suiteLogger is the logger of the DBs that outlive a case: a test's log
// ends with its test.
var suiteLogger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

// dropReusable closes the DBs the suites kept open and drops the databases
// reusableDatabase made.
func dropReusable() {
	reusable.Lock()
	defer reusable.Unlock()
	for _, o := range reusable.open {
		_ = o.db.Close()
		reusable.names = append(reusable.names, o.name)
	}
	reusable.open = nil
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

// TestSuiteCasesHandOnTheirStore checks suiteDB's hand-over: the next case
// gets the DB a case before it left open, emptied, and never one that a
// case restarted (closed).
func TestSuiteCasesHandOnTheirStore(t *testing.T) {
	serverDSN(t)
	var first, second, third *DB
	t.Run("writes", func(t *testing.T) {
		first, _, _ = suiteDB(t)
		if _, err := first.Store().CreateIntent(t.Context(), newTestIntent("handed-on")); err != nil {
			t.Fatal(err)
		}
		if n := countIntents(t, first); n != 1 {
			t.Fatalf("%d intents stored, want 1", n)
		}
	})
	t.Run("restarts", func(t *testing.T) {
		var restarted func()
		second, _, restarted = suiteDB(t)
		if second != first {
			t.Fatal("the DB the case before left open was not handed on")
		}
		if n := countIntents(t, second); n != 0 {
			t.Fatalf("the handed-on database holds %d intents, want it emptied", n)
		}
		restarted()
		if err := second.Close(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("after", func(t *testing.T) {
		third, _, _ = suiteDB(t)
		if third == second {
			t.Fatal("a restarted (closed) DB was handed on")
		}
		if n := countIntents(t, third); n != 0 {
			t.Fatalf("the database holds %d intents, want it emptied", n)
		}
	})
}

// countIntents is how many intents the test's database holds.
func countIntents(t *testing.T, db *DB) int {
	t.Helper()
	var n int
	if err := db.queries.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM submission_intents").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

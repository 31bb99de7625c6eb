package sqlserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/sqlservertest"
)

// The SQL Server tests run against the server sqlservertest finds (see its
// package comment); each test gets a database of its own.

func TestMain(m *testing.M) {
	code := m.Run()
	dropReusable()
	if err := sqlservertest.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// serverDSN returns the admin DSN of the test server, or skips the test
// with the exact reason no server is available (fails it under CI).
func serverDSN(t *testing.T) string {
	t.Helper()
	return sqlservertest.AdminDSN(t)
}

// adminDB returns the shared connection pool on the server's admin
// database.
func adminDB(t *testing.T) *sql.DB {
	t.Helper()
	return sqlservertest.Admin(t)
}

// databaseOptions tunes a test database before its schema is migrated.
type databaseOptions struct {
	// readCommittedSnapshot turns READ_COMMITTED_SNAPSHOT on, as Azure SQL
	// Database has it by default.
	readCommittedSnapshot bool
}

// freshDatabase creates an empty database for one test, dropped when the
// test ends, and returns a DSN for it.
func freshDatabase(t *testing.T, opts databaseOptions) string {
	t.Helper()
	name, dsn := sqlservertest.Database(t)
	if opts.readCommittedSnapshot {
		if serverIsBabelfish(t, adminDB(t)) {
			// The callers ask first (babelfishReadsRowVersions).
			t.Fatal("Babelfish has no ALTER DATABASE, so no READ_COMMITTED_SNAPSHOT to turn on")
		}
		if _, err := adminDB(t).ExecContext(context.Background(), "ALTER DATABASE "+name+" SET READ_COMMITTED_SNAPSHOT ON WITH ROLLBACK IMMEDIATE"); err != nil {
			t.Fatalf("turn READ_COMMITTED_SNAPSHOT on: %v", err)
		}
	}
	return dsn
}

// serverIsBabelfish asks the server what Open would detect.
func serverIsBabelfish(t *testing.T, admin *sql.DB) bool {
	t.Helper()
	var property, database sql.NullString
	if err := admin.QueryRowContext(context.Background(), engineSQL).Scan(&property, &database); err != nil {
		t.Fatalf("detect engine: %v", err)
	}
	return engineFor(property).babelfish
}

// openTestDB opens the adapter on dsn and closes it when the test ends.
func openTestDB(t *testing.T, dsn string) *DB {
	t.Helper()
	db, err := Open(context.Background(), Config{DSN: dsn, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// migratedDB opens an empty, migrated database: a reused one (see
// reusableDatabase) unless opts asks for a tuned one.
func migratedDB(t *testing.T, opts databaseOptions) (*DB, string) {
	t.Helper()
	if opts == (databaseOptions{}) {
		dsn, fresh := reusableDatabase(t)
		db := openTestDB(t, dsn)
		emptyOrMigrate(t, db, fresh)
		return db, dsn
	}
	dsn := freshDatabase(t, opts)
	db := openTestDB(t, dsn)
	emptyOrMigrate(t, db, true)
	return db, dsn
}

// emptyOrMigrate readies an open database for a test: migrates a fresh
// one, empties one an earlier test used.
func emptyOrMigrate(t *testing.T, db *DB, fresh bool) {
	t.Helper()
	if !fresh {
		emptyTables(t, db)
	} else if err := db.Migrate(context.Background(), "up"); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
}

// testLogger sends the adapter's logs to the test's log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// shareLastModifiedSQL gives the listed intents one change timestamp, no
// earlier than any row's, in one statement: what a bulk write on a coarse
// clock produces, for the store suite's ShareLastModified.
const shareLastModifiedSQL = `UPDATE submission_intents
SET last_modified_at = GREATEST(SYSUTCDATETIME(), (SELECT MAX(last_modified_at) FROM submission_intents))
WHERE intent_id IN (SELECT CAST(value AS nvarchar(255)) FROM OPENJSON($1))`

func shareLastModified(t *testing.T, db *DB, intentIDs []string) {
	t.Helper()
	ids, err := json.Marshal(intentIDs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.queries.ExecContext(context.Background(), shareLastModifiedSQL, string(ids))
	if err != nil {
		t.Fatalf("share last_modified_at: %v", err)
	}
	if n, _ := res.RowsAffected(); n != int64(len(intentIDs)) {
		t.Fatalf("share last_modified_at updated %d rows, want %d", n, len(intentIDs))
	}
}

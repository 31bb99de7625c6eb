package sqlserver

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	mssqldb "github.com/microsoft/go-mssqldb"
	"github.com/testcontainers/testcontainers-go"
	tcmssql "github.com/testcontainers/testcontainers-go/modules/mssql"
)

// The SQL Server tests run against the server named by
// SUBMISSION_TEST_SQLSERVER_DSN (any database on it; the login needs
// CREATE DATABASE) or, without it, a container started through
// testcontainers. Each test gets a database of its own.
const (
	envDSN       = "SUBMISSION_TEST_SQLSERVER_DSN"
	envImage     = "SUBMISSION_TEST_SQLSERVER_IMAGE"
	defaultImage = "mcr.microsoft.com/mssql/server:2022-CU18-ubuntu-22.04"
	// The container's sa password: SQL Server's complexity rules, and no
	// character that would need escaping in the URL DSN.
	containerPassword = "Submission2026Manager"
)

// testServer is the shared server of this package's tests, found or
// started once. TestMain stops a container it started.
var testServer struct {
	once      sync.Once
	dsn       string // admin DSN
	skip      string // why the SQL Server tests cannot run, when set
	err       error  // a server should have been available but failed
	container *tcmssql.MSSQLServerContainer
}

func TestMain(m *testing.M) {
	code := m.Run()
	if c := testServer.container; c != nil {
		if err := testcontainers.TerminateContainer(c); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the SQL Server container: %v\n", err)
		}
	}
	os.Exit(code)
}

// serverDSN returns the admin DSN of the test server, or skips the test with
// the exact reason no server is available.
func serverDSN(t *testing.T) string {
	t.Helper()
	testServer.once.Do(findServer)
	if testServer.skip != "" {
		t.Skip(testServer.skip)
	}
	if testServer.err != nil {
		t.Fatalf("SQL Server for tests: %v", testServer.err)
	}
	return testServer.dsn
}

func findServer() {
	if dsn := os.Getenv(envDSN); dsn != "" {
		testServer.dsn = dsn
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := dockerHealth(ctx); err != nil {
		host := os.Getenv("DOCKER_HOST")
		if host == "" {
			host = "unix:///var/run/docker.sock"
		}
		testServer.skip = fmt.Sprintf("SQL Server tests skipped: %s is unset and no Docker engine answers at %s (testcontainers: %v)",
			envDSN, host, err)
		return
	}
	image := os.Getenv(envImage)
	if image == "" {
		image = defaultImage
	}
	c, err := tcmssql.Run(ctx, image, tcmssql.WithAcceptEULA(), tcmssql.WithPassword(containerPassword))
	testServer.container = c
	if err != nil {
		testServer.err = fmt.Errorf("start %s: %w", image, err)
		return
	}
	dsn, err := c.ConnectionString(ctx, "TrustServerCertificate=true")
	if err != nil {
		testServer.err = fmt.Errorf("container connection string: %w", err)
		return
	}
	testServer.dsn = dsn
}

// dockerHealth asks testcontainers whether a Docker engine answers, without
// letting its panics (no socket at all) escape.
func dockerHealth(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	provider, err := testcontainers.ProviderDocker.GetProvider()
	if err != nil {
		return err
	}
	defer provider.Close()
	return provider.Health(ctx)
}

// dsnWithDatabase points a DSN (URL or ADO form) at another database.
func dsnWithDatabase(dsn, database string) (string, error) {
	if strings.HasPrefix(dsn, "sqlserver://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", err
		}
		q := u.Query()
		q.Set("database", database)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	if strings.HasPrefix(dsn, "odbc:") {
		return "", fmt.Errorf("ODBC-form DSNs are not supported by the tests; use the URL or ADO form")
	}
	return strings.TrimRight(dsn, "; ") + ";database=" + database, nil
}

// adminDB opens the server's admin connection (plain driver).
func adminDB(t *testing.T) *sql.DB {
	t.Helper()
	connector, err := mssqldb.NewConnector(serverDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { _ = db.Close() })
	return db
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
	admin := adminDB(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "sm_test_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() { dropDatabase(t, admin, name) })
	if opts.readCommittedSnapshot {
		if serverIsBabelfish(t, admin) {
			t.Skip("Babelfish for PostgreSQL has no ALTER DATABASE, so no READ_COMMITTED_SNAPSHOT to turn on")
		}
		if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+name+" SET READ_COMMITTED_SNAPSHOT ON WITH ROLLBACK IMMEDIATE"); err != nil {
			t.Fatalf("turn READ_COMMITTED_SNAPSHOT on: %v", err)
		}
	}
	dsn, err := dsnWithDatabase(serverDSN(t), name)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// dropDatabase drops a test database. SQL Server first ends the sessions
// still in it (SET SINGLE_USER WITH ROLLBACK IMMEDIATE); Babelfish for
// PostgreSQL has no ALTER DATABASE and refuses that, so a plain DROP
// DATABASE follows.
func dropDatabase(t *testing.T, admin *sql.DB, name string) {
	t.Helper()
	ctx := context.Background()
	_, err := admin.ExecContext(ctx, "ALTER DATABASE "+name+" SET SINGLE_USER WITH ROLLBACK IMMEDIATE; DROP DATABASE "+name)
	if err == nil {
		return
	}
	if _, plainErr := admin.ExecContext(ctx, "DROP DATABASE "+name); plainErr != nil {
		t.Errorf("drop test database %s: %v; then plain DROP DATABASE: %v", name, err, plainErr)
	}
}

// serverIsBabelfish asks the server what Open would detect.
func serverIsBabelfish(t *testing.T, admin *sql.DB) bool {
	t.Helper()
	var property sql.NullString
	if err := admin.QueryRowContext(context.Background(), engineSQL).Scan(&property); err != nil {
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

// migratedDB opens a fresh, migrated database.
func migratedDB(t *testing.T, opts databaseOptions) (*DB, string) {
	t.Helper()
	dsn := freshDatabase(t, opts)
	db := openTestDB(t, dsn)
	if err := db.Migrate(context.Background(), "up"); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	return db, dsn
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

package sqlservertest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	mssqldb "github.com/microsoft/go-mssqldb"
)

// admin is one connection pool to the admin database, shared by every test
// of the process: a new connection and its first statements cost a
// Babelfish server a good part of a second of CPU, too much to pay for
// each test's database.
var admin struct {
	mu sync.Mutex
	db *sql.DB
}

// Admin returns the shared pool on the test server's admin database (see
// AdminDSN for a missing server). Stop closes it.
func Admin(t testing.TB) *sql.DB {
	t.Helper()
	dsn := AdminDSN(t)
	admin.mu.Lock()
	defer admin.mu.Unlock()
	if admin.db == nil {
		connector, err := mssqldb.NewConnector(dsn)
		if err != nil {
			t.Fatalf("SQL Server DSN: %v", err)
		}
		admin.db = sql.OpenDB(connector)
		admin.db.SetMaxIdleConns(2)
		if err := dropStaleDatabases(context.Background(), admin.db, "sm[_]test[_]%", staleAfter); err != nil {
			t.Logf("dropping stale test databases: %v", err)
		}
	}
	return admin.db
}

// staleAfter is the age past which a test database is left over from a run
// that was killed: no test run lasts this long.
const staleAfter = 3 * time.Hour

// dropStaleDatabases drops the databases whose names are LIKE pattern
// (Admin's: NewName's) and that were created more than age ago. A test run
// that is killed never reaches its cleanups, and on a shared server its
// databases would pile up with every such run; the age keeps the databases
// of runs still going (test packages run in parallel, each with its own)
// out of reach. Only plain names are dropped, as DropDatabase writes them
// into its statement.
func dropStaleDatabases(ctx context.Context, admin *sql.DB, pattern string, age time.Duration) error {
	rows, err := admin.QueryContext(ctx, `SELECT name FROM sys.databases
WHERE name LIKE @p1 AND create_date < DATEADD(second, -@p2, GETDATE())`, pattern, int64(age/time.Second))
	if err != nil {
		return err
	}
	var stale []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			_ = rows.Close()
			return err
		}
		if plainName.MatchString(name) {
			stale = append(stale, name)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	var errs []error
	for _, name := range stale {
		errs = append(errs, DropDatabase(ctx, admin, name))
	}
	return errors.Join(errs...)
}

// Database creates an empty database for the test, dropped when the test
// ends, and returns its name and a DSN for it.
func Database(t testing.TB) (name, dsn string) {
	t.Helper()
	db := Admin(t)
	name = NewName()
	if err := CreateDatabase(context.Background(), db, name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		if err := DropDatabase(context.Background(), db, name); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	dsn, err := DSNWithDatabase(AdminDSN(t), name)
	if err != nil {
		t.Fatal(err)
	}
	return name, dsn
}

// NewName returns a fresh test database name.
func NewName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "sm_test_" + hex.EncodeToString(b[:])
}

// catalogRetries bounds the retries of CREATE and DROP DATABASE on Babelfish.
const catalogRetries = 5

// onCatalog runs a CREATE or DROP DATABASE statement. Babelfish for
// PostgreSQL fails one that runs at the same time as another (test
// packages run in parallel) with PostgreSQL's "tuple concurrently updated";
// the statement changed nothing then, and runs again.
func onCatalog(ctx context.Context, admin *sql.DB, statement string) error {
	var err error
	for range catalogRetries {
		if _, err = admin.ExecContext(ctx, statement); err == nil ||
			!strings.Contains(err.Error(), "tuple concurrently updated") {
			return err
		}
	}
	return err
}

// CreateDatabase creates the database name.
func CreateDatabase(ctx context.Context, admin *sql.DB, name string) error {
	return onCatalog(ctx, admin, "CREATE DATABASE "+name)
}

// DropDatabase drops the database name. SQL Server first ends the sessions
// still in it (SET SINGLE_USER WITH ROLLBACK IMMEDIATE); Babelfish for
// PostgreSQL has no ALTER DATABASE and refuses that, so a plain DROP
// DATABASE follows.
func DropDatabase(ctx context.Context, admin *sql.DB, name string) error {
	err := onCatalog(ctx, admin, "ALTER DATABASE "+name+" SET SINGLE_USER WITH ROLLBACK IMMEDIATE; DROP DATABASE "+name)
	if err == nil {
		return nil
	}
	if plainErr := onCatalog(ctx, admin, "DROP DATABASE "+name); plainErr != nil {
		return fmt.Errorf("drop database %s: %w; then plain DROP DATABASE: %w", name, err, plainErr)
	}
	return nil
}

// plainName is the shape of the names dropStaleDatabases drops.
var plainName = regexp.MustCompile(`^[a-z0-9_]+$`)

// DSNWithDatabase points a DSN (URL or ADO form) at another database.
func DSNWithDatabase(dsn, database string) (string, error) {
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

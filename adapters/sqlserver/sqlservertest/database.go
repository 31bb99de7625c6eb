package sqlservertest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

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
	}
	return admin.db
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

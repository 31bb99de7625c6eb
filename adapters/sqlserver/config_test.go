package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/sqlservertest"
	"github.com/submissionmanager/submission-manager/core"
)

func TestNewConnectorsUseTheRightDrivers(t *testing.T) {
	conns, params, err := newConnectors("sqlserver://sm:secret@db.example:1433?database=submissions")
	if err != nil {
		t.Fatal(err)
	}
	if params.Database != "submissions" || params.Host != "db.example" || params.Port != 1433 {
		t.Fatalf("parsed %s:%d/%s", params.Host, params.Port, params.Database)
	}
	if params.AppName != defaultAppName {
		t.Errorf("app name %q, want the default %q so DBAs can tell the service's sessions apart", params.AppName, defaultAppName)
	}
	// go-mssqldb registers its query-text processing driver as "mssql" and
	// the plain one as "sqlserver"; opening a handle connects to nothing.
	processing, err := sql.Open("mssql", "")
	if err != nil {
		t.Fatal(err)
	}
	defer processing.Close()
	plain, err := sql.Open("sqlserver", "")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if conns.queries.Driver() != processing.Driver() {
		t.Error("the query connector does not rewrite $N placeholders: sqlc's queries would run with $1 as a money literal")
	}
	if conns.plain.Driver() != plain.Driver() {
		t.Error("the migration connector rewrites query text: goose's own @p1 queries need the plain driver")
	}
}

func TestNewConnectorsKeepsExplicitAppName(t *testing.T) {
	_, params, err := newConnectors("server=db.example;user id=sm;password=x;database=subs;app name=custom")
	if err != nil {
		t.Fatal(err)
	}
	if params.AppName != "custom" || params.Database != "subs" {
		t.Fatalf("ADO DSN parsed to app %q database %q", params.AppName, params.Database)
	}
}

func TestNewConnectorsRefusesDSNWithoutDatabase(t *testing.T) {
	for _, dsn := range []string{"", "sqlserver://sm:secret@db.example:1433", "server=db.example;user id=sm"} {
		if _, _, err := newConnectors(dsn); err == nil {
			t.Errorf("newConnectors(%q) accepted a DSN that names no database", dsn)
		}
	}
	if _, _, err := newConnectors("sqlserver://db.example:notaport?database=x"); err == nil {
		t.Error("newConnectors accepted an unparsable DSN")
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg := Config{DSN: "x", MaxOpenConns: 4, MaxIdleConns: 9}.withDefaults().sizedFor(sqlServer)
	if cfg.MaxOpenConns != 4 || cfg.MaxIdleConns != 4 {
		t.Errorf("pool %d open / %d idle, want 4/4 (idle capped at open)", cfg.MaxOpenConns, cfg.MaxIdleConns)
	}
	if cfg.ConnMaxLifetime != defaultConnMaxLifetime || cfg.MigrationLockTimeout != defaultMigrationLockTimeout || cfg.Logger == nil {
		t.Errorf("defaults not applied: %+v", cfg)
	}
	for _, eng := range []engine{sqlServer, babelfish} {
		d := Config{}.withDefaults().sizedFor(eng)
		if d.MaxOpenConns != eng.queryConns || d.MaxIdleConns != eng.queryConns || d.LeaseLockTimeout != defaultLeaseLockTimeout {
			t.Errorf("default pool %d/%d (babelfish %v), lease lock %v; want the engine's %d, every connection kept idle",
				d.MaxOpenConns, d.MaxIdleConns, eng.babelfish, d.LeaseLockTimeout, eng.queryConns)
		}
	}
}

// TestOpenUnreachableServer needs no server: a closed loopback port must
// fail Open with core.ErrStoreUnavailable, not hang and not panic.
func TestOpenUnreachableServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := Open(ctx, Config{DSN: "sqlserver://sm:x@127.0.0.1:1?database=subs&dial+timeout=2"})
	if !errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("Open against a closed port: %v, want core.ErrStoreUnavailable", err)
	}
	if !strings.Contains(err.Error(), "subs") {
		t.Errorf("error %q does not name the database", err)
	}
}

func TestDSNWithDatabase(t *testing.T) {
	got, err := sqlservertest.DSNWithDatabase("sqlserver://sa:pw@localhost:1433?TrustServerCertificate=true&database=master", "sm_test_1")
	if err != nil {
		t.Fatal(err)
	}
	_, params, err := newConnectors(got)
	if err != nil || params.Database != "sm_test_1" || params.Host != "localhost" {
		t.Fatalf("URL DSN %q: database %q host %q err %v", got, params.Database, params.Host, err)
	}
	got, err = sqlservertest.DSNWithDatabase("server=localhost;user id=sa;password=pw;database=master;", "sm_test_2")
	if err != nil {
		t.Fatal(err)
	}
	if _, params, err := newConnectors(got); err != nil || params.Database != "sm_test_2" {
		t.Fatalf("ADO DSN %q: database %q err %v", got, params.Database, err)
	}
}

// TestFactsStateALookback pins the fact the leader's refresh relies on:
// concurrent SQL Server transactions commit out of change-marker order, so
// the store states a look-back instead of cmd switching on the dialect.
func TestFactsStateALookback(t *testing.T) {
	if lb := (&store{}).Facts().ChangeLookback; lb <= 0 {
		t.Fatalf("SQL Server store states ChangeLookback %v, want a positive window", lb)
	}
}

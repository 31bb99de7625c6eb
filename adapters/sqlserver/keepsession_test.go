package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/sqlservertest"
	"github.com/submissionmanager/submission-manager/core"
)

// TestSessionIsResetOnlyAfterAnUnfinishedUse checks keepSession on the
// server: a session's temporary table, which the server's session reset
// drops, survives a use that completed and is gone after one that may
// have left state behind. The first case is the driver without the
// wrapper, which resets at every reuse. (A repeatable read transaction
// is TestSessionIsResetAfterAnotherIsolationLevel's: Babelfish drops the
// temporary table at its commit, so this test could not tell.)
func TestSessionIsResetOnlyAfterAnUnfinishedUse(t *testing.T) {
	conns, _, err := newConnectors(sqlservertest.AdminDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	readAll := func(_ *testing.T, ctx context.Context, db *sql.DB) error {
		rows, err := db.QueryContext(ctx, "SELECT 1 AS a UNION ALL SELECT 2")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
		}
		return rows.Err()
	}
	inTx := func(level sql.IsolationLevel) func(*testing.T, context.Context, *sql.DB) error {
		return func(_ *testing.T, ctx context.Context, db *sql.DB) error {
			tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: level})
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "SELECT 1"); err != nil {
				return err
			}
			return tx.Commit()
		}
	}
	cases := []struct {
		name string
		keep bool
		use  func(*testing.T, context.Context, *sql.DB) error
		kept bool
	}{
		{"driver alone, a complete read", false, readAll, false},
		{"a complete read", true, readAll, true},
		{"one row of two (QueryRow)", true, func(_ *testing.T, ctx context.Context, db *sql.DB) error {
			var a int
			return db.QueryRowContext(ctx, "SELECT 1 AS a UNION ALL SELECT 2").Scan(&a)
		}, true},
		{"an exec", true, func(_ *testing.T, ctx context.Context, db *sql.DB) error {
			_, err := db.ExecContext(ctx, "DECLARE @a int = $1", 1)
			return err
		}, true},
		{"a read committed transaction", true, inTx(sql.LevelReadCommitted), true},
		{"a failed request", true, func(t *testing.T, ctx context.Context, db *sql.DB) error {
			_, err := db.ExecContext(ctx, "THROW 51999, N'fails on purpose', 1")
			if err == nil {
				t.Error("THROW did not fail")
			}
			return nil
		}, false},
		{"a cancelled request", true, func(t *testing.T, ctx context.Context, db *sql.DB) error {
			short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			if _, err := db.ExecContext(short, "WAITFOR DELAY '00:00:05'"); err == nil {
				t.Error("the request outlived its context")
			}
			return nil
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			var connector driver.Connector = conns.queries
			if c.keep {
				connector = keepSession(connector)
			}
			db := sql.OpenDB(connector)
			defer db.Close()
			db.SetMaxOpenConns(1)
			if _, err := db.ExecContext(ctx, "CREATE TABLE #kept (a int)"); err != nil {
				t.Fatal(err)
			}
			if err := c.use(t, ctx, db); err != nil {
				t.Fatal(err)
			}
			_, err := db.ExecContext(ctx, "SELECT COUNT(*) FROM #kept")
			if kept := err == nil; kept != c.kept {
				t.Errorf("temporary table kept = %v (err %v), want %v", kept, err, c.kept)
			}
		})
	}
}

// fakeSession is a driver connection that counts its session resets.
type fakeSession struct{ resets int }

func (f *fakeSession) Prepare(string) (driver.Stmt, error) { return nil, errors.New("not here") }
func (f *fakeSession) Close() error                        { return nil }
func (f *fakeSession) Begin() (driver.Tx, error)           { return fakeTx{}, nil }
func (f *fakeSession) BeginTx(context.Context, driver.TxOptions) (driver.Tx, error) {
	return fakeTx{}, nil
}
func (f *fakeSession) ResetSession(context.Context) error { f.resets++; return nil }
func (f *fakeSession) IsValid() bool                      { return true }

type fakeTx struct{}

func (fakeTx) Commit() error   { return nil }
func (fakeTx) Rollback() error { return nil }

// TestSessionIsResetAfterAnotherIsolationLevel checks that a transaction
// at an isolation level SQL Server would keep for the session's later
// statements has the session reset before its next use, and that one at
// read committed, the default, does not.
func TestSessionIsResetAfterAnotherIsolationLevel(t *testing.T) {
	for _, c := range []struct {
		level  sql.IsolationLevel
		resets int
	}{{sql.LevelDefault, 0}, {sql.LevelReadCommitted, 0}, {sql.LevelRepeatableRead, 1}, {sql.LevelSerializable, 1}, {sql.LevelSnapshot, 1}} {
		fake := &fakeSession{}
		conn := &keptConn{Conn: fake}
		tx, err := conn.BeginTx(context.Background(), driver.TxOptions{Isolation: driver.IsolationLevel(c.level)})
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second reuse follows a clean one
			if err := conn.ResetSession(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if fake.resets != c.resets {
			t.Errorf("%v: %d resets, want %d", c.level, fake.resets, c.resets)
		}
	}
}

// TestKeptSessionsStillCountRows runs a write that counts its rows
// (ResumeGateway, :execrows) after a procedure (CreateIntent) and after an
// intervention's parameterised batch, on a query pool of one connection
// that neither has reset. Both SET NOCOUNT ON: a procedure's options end
// with it on either server, and the batch sets its own back last, which
// Babelfish would otherwise keep for the session.
func TestKeptSessionsStillCountRows(t *testing.T) {
	_, dsn := sqlservertest.Database(t)
	ctx := context.Background()
	db, err := Open(ctx, Config{DSN: dsn, Logger: testLogger(t), MaxOpenConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, "up"); err != nil {
		t.Fatal(err)
	}
	s := db.Store()
	p := testOperator
	p.IntentID = "to-cancel"
	for _, step := range []struct {
		name string
		run  func() error
	}{
		{"CreateIntent", func() error {
			_, err := s.CreateIntent(ctx, newTestIntent(p.IntentID))
			return err
		}},
		{"CancelIntent", func() error {
			if applied, err := s.CancelIntent(ctx, p); err != nil || !applied {
				return fmt.Errorf("applied %v, %w", applied, err)
			}
			return nil
		}},
	} {
		if _, err := s.PauseGateway(ctx, core.GatewayPause{GatewayType: core.GatewaySMS}); err != nil {
			t.Fatal(err)
		}
		if err := step.run(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if found, err := s.ResumeGateway(ctx, core.GatewaySMS, ""); err != nil || !found {
			t.Errorf("ResumeGateway after %s = %v, %v, want the pause found", step.name, found, err)
		}
	}
}

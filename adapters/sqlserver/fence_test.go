package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
)

// TestEngineFromServerProperty checks what Open makes of
// SERVERPROPERTY('Babelfish'): SQL Server keeps REPEATABLE READ, whose shared
// lease-row lock fences a write; Babelfish, where REPEATABLE READ is refused
// or is snapshot isolation, runs READ COMMITTED and locks the row instead.
func TestEngineFromServerProperty(t *testing.T) {
	onSQLServer := engineFor(sql.NullString{})
	if onSQLServer.babelfish || onSQLServer.fencedIsolation != sql.LevelRepeatableRead || onSQLServer.lockingReadIsolation != sql.LevelRepeatableRead {
		t.Errorf("SQL Server (property NULL): %+v", onSQLServer)
	}
	onBabelfish := engineFor(sql.NullString{String: "4.2.0", Valid: true})
	if !onBabelfish.babelfish || onBabelfish.fencedIsolation != sql.LevelReadCommitted || onBabelfish.lockingReadIsolation != sql.LevelReadCommitted {
		t.Errorf("Babelfish (property set): %+v", onBabelfish)
	}
}

// TestBabelfishFenceLocksTheLeaseRow checks the statement the Babelfish
// fence sends: the guarded no-op UPDATE whose row lock a takeover waits for,
// never a plain read, and that zero rows is core.ErrFenced.
func TestBabelfishFenceLocksTheLeaseRow(t *testing.T) {
	fence := core.Fence{LeaseName: core.DefaultLeaseName, HolderID: "leader-1", Epoch: 7}
	for _, rows := range []int64{1, 0} {
		rec := &recordingDB{rows: rows}
		err := babelfish.checkFence(context.Background(), sqlserverdb.New(rec), fence)
		if rows == 1 && err != nil {
			t.Fatalf("fence held: %v", err)
		}
		if rows == 0 && !errors.Is(err, core.ErrFenced) {
			t.Fatalf("no row locked: err %v, want core.ErrFenced", err)
		}
		if len(rec.execs) != 1 || len(rec.queries) != 0 {
			t.Fatalf("sent %d statements and %d queries, want the one UPDATE", len(rec.execs), len(rec.queries))
		}
		sent := rec.execs[0]
		for _, want := range []string{"UPDATE submission_manager_leases", "SET lease_epoch = lease_epoch", "holder_id = ", "lease_epoch = CAST", "expires_at > SYSUTCDATETIME()"} {
			if !strings.Contains(sent, want) {
				t.Errorf("fence statement lacks %q:\n%s", want, sent)
			}
		}
		if got := rec.args[0]; len(got) != 3 || got[0] != fence.LeaseName || got[1] != fence.HolderID || got[2] != fence.Epoch {
			t.Errorf("fence arguments %v", got)
		}
	}
}

// recordingDB is a sqlserverdb.DBTX that records what would be sent.
type recordingDB struct {
	rows    int64
	execs   []string
	queries []string
	args    [][]any
}

func (r *recordingDB) ExecContext(_ context.Context, query string, args ...any) (sql.Result, error) {
	r.execs = append(r.execs, query)
	r.args = append(r.args, args)
	return driver.RowsAffected(r.rows), nil
}

func (r *recordingDB) PrepareContext(context.Context, string) (*sql.Stmt, error) {
	return nil, errors.New("recordingDB prepares nothing")
}

func (r *recordingDB) QueryContext(_ context.Context, query string, _ ...any) (*sql.Rows, error) {
	r.queries = append(r.queries, query)
	return nil, errors.New("recordingDB answers no query")
}

func (r *recordingDB) QueryRowContext(_ context.Context, query string, _ ...any) *sql.Row {
	r.queries = append(r.queries, query)
	panic("recordingDB answers no query")
}

package sqlserver

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

// uniqueLeaseName names a lease no other test uses: on Babelfish a lock
// name is shared by every database of the server, and a test that loses
// one must not take another test's with it.
func uniqueLeaseName(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

// lockStatus asks for the lease lock of leaseName in mode, owned by a
// transaction on db's query pool, and answers sp_getapplock's status. The
// transaction rolls back at once, so the lock is only asked for.
func lockStatus(t *testing.T, db *DB, leaseName, mode string, timeout time.Duration) int {
	t.Helper()
	ctx := t.Context()
	tx, err := db.queries.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var status int
	err = tx.QueryRowContext(ctx, `DECLARE @status int;
EXEC @status = sp_getapplock @Resource = $1, @LockMode = $2, @LockOwner = 'Transaction', @LockTimeout = $3;
SELECT @status;`, db.locks.lease(leaseName), mode, lockTimeoutMillis(timeout)).Scan(&status)
	if err != nil {
		t.Fatalf("sp_getapplock %s: %v", mode, err)
	}
	return status
}

// TestEveryInstancePinsTheLeaseLock: an instance that has asked for the
// lease holds its lock in IntentShared for its session. The pin shows in
// the one mode it conflicts with, Exclusive, which no instance asks for;
// it holds back neither a takeover (IntentExclusive) nor a fenced write
// (Shared); and it ends with the instance.
func TestEveryInstancePinsTheLeaseLock(t *testing.T) {
	db, dsn := migratedDB(t, databaseOptions{})
	name := uniqueLeaseName(t, "pin-")
	instance, err := Open(context.Background(), Config{DSN: dsn, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = instance.Close()
		}
	})
	if status := lockStatus(t, db, name, "Exclusive", 0); status < 0 {
		t.Fatalf("before any instance asked for the lease, Exclusive answered %d", status)
	}
	leasetest.MustAcquire(t, instance.Leases(), name, "holder-a", leasetest.LongLease)

	if status := lockStatus(t, db, name, "Exclusive", 0); status >= 0 {
		t.Errorf("Exclusive was granted (%d) while an instance pins the lease lock", status)
	}
	for _, mode := range []string{"IntentExclusive", "Shared"} {
		if status := lockStatus(t, db, name, mode, time.Second); status < 0 {
			t.Errorf("%s was refused (%d) beside the pin", mode, status)
		}
	}
	if err := instance.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	// The server ends the session a little after the connection closes.
	if status := lockStatus(t, db, name, "Exclusive", 10*time.Second); status < 0 {
		t.Errorf("Exclusive was refused (%d) after the instance closed", status)
	}
}

// TestLeaseLockKeepsItsName has two sessions take the lease lock Shared in
// turn, as fast as they go, the way the executor's batches of reservations
// and of results take it. Without the pin, Babelfish 4.2 lost the lock's
// name this way after about 15,000 grants (14,735 in one run, 15,620 in a
// probe's, none lost in another run's first 15,682; from then on every
// request answered -999, until the server restarted); with it, all of them
// are granted. A failure here leaves that name lost on a Babelfish server,
// which is why the name is the test's own.
func TestLeaseLockKeepsItsName(t *testing.T) {
	db, _ := migratedDB(t, databaseOptions{})
	name := uniqueLeaseName(t, "keep-")
	leasetest.MustAcquire(t, db.Leases(), name, "holder-a", leasetest.LongLease)

	const writers, grants = 2, 30_000
	var asked atomic.Int64
	var failure atomic.Pointer[error]
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			conn, err := db.queries.Conn(t.Context())
			if err != nil {
				failure.CompareAndSwap(nil, &err)
				return
			}
			defer func() { _ = conn.Close() }()
			for failure.Load() == nil && asked.Add(1) <= grants {
				if err := takeLockInTx(t.Context(), conn, db.locks.lease(name)); err != nil {
					failure.CompareAndSwap(nil, &err)
				}
			}
		})
	}
	wg.Wait()
	if err := failure.Load(); err != nil {
		t.Fatalf("after %d requests for the lease lock by %d sessions in turn: %v", asked.Load(), writers, *err)
	}
}

// babelfishNoSuchSession is the error Babelfish's KILL raises when it does
// not find the session in sys.dm_exec_sessions.
const babelfishNoSuchSession = 33557097

// killSession ends the session spid from another session. Babelfish's KILL
// looks the session up in sys.dm_exec_sessions first, which missed a live
// session in CI runs with every package's tests loading the server
// ("Process ID ... is not an active process ID for a TDS connection"), once
// for over a second, so that answer is asked again every 200 ms for up to
// 10 s before it counts.
func killSession(t *testing.T, spid int) error {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := adminDB(t).ExecContext(t.Context(), fmt.Sprintf("KILL %d;", spid))
		var serverErr mssql.Error
		if !errors.As(err, &serverErr) || serverErr.Number != babelfishNoSuchSession || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// takeLockInTx takes the lease lock named resource Shared in a transaction
// of its own on conn and commits, which lets the lock go.
func takeLockInTx(ctx context.Context, conn *sql.Conn, resource string) error {
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return err
	}
	if err := takeLeaseLock(ctx, tx, sharedLeaseLockSQL, resource, 5*time.Second); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// TestPinIsTakenAgainAfterItsSessionEnds: when the pin's session ends (the
// server restarted, the connection broke, an operator killed it), the
// instance's next lease call after pinCheckEvery finds out and pins the
// lease lock again on a new session.
func TestPinIsTakenAgainAfterItsSessionEnds(t *testing.T) {
	db, _ := migratedDB(t, databaseOptions{})
	name := uniqueLeaseName(t, "repin-")
	lease := leasetest.MustAcquire(t, db.Leases(), name, "holder-a", leasetest.LongLease)

	var spid int
	db.pin.mu.Lock()
	err := db.pin.conn.QueryRowContext(t.Context(), `SELECT @@SPID;`).Scan(&spid)
	db.pin.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := killSession(t, spid); err != nil {
		t.Fatalf("KILL %d: %v", spid, err)
	}
	if status := lockStatus(t, db, name, "Exclusive", 10*time.Second); status < 0 {
		t.Fatalf("Exclusive was refused (%d) after the pin's session was killed", status)
	}

	db.pin.mu.Lock()
	db.pin.checkedAt = time.Now().Add(-pinCheckEvery)
	db.pin.mu.Unlock()
	if _, err := db.Leases().Renew(t.Context(), ports.RenewLeaseParams{Fence: lease.Fence(), Duration: leasetest.LongLease}); err != nil {
		t.Fatal(err)
	}
	if status := lockStatus(t, db, name, "Exclusive", 0); status >= 0 {
		t.Errorf("Exclusive was granted (%d) after a renewal should have pinned the lease lock again", status)
	}
}

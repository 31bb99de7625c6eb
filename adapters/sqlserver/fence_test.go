package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

// takeoverLeaseLockSQL takes the lease lock as a takeover does
// (dbo.submission_acquire_lease), so that a test can hold it in a
// transaction of its own; it answers as sharedLeaseLockSQL does.
const takeoverLeaseLockSQL = `DECLARE @status int;
EXEC @status = sp_getapplock @Resource = $1, @LockMode = 'IntentExclusive', @LockOwner = 'Transaction', @LockTimeout = $2;
SELECT @status;`

// holdLeaseLock begins a transaction on the query pool that takes the
// executor's lease lock with lockSQL (sharedLeaseLockSQL or
// takeoverLeaseLockSQL) and keeps it until the caller ends it, or the test
// does.
func holdLeaseLock(t *testing.T, db *DB, lockSQL string) *sql.Tx {
	t.Helper()
	tx, err := db.queries.BeginTx(t.Context(), &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	if err := takeLeaseLock(t.Context(), tx, lockSQL, db.locks.lease(core.DefaultLeaseName), time.Second); err != nil {
		t.Fatalf("holding the lease lock: %v", err)
	}
	return tx
}

// TestEngineFromServerProperty checks what Open makes of
// SERVERPROPERTY('Babelfish'): SQL Server reads the change feed under
// REPEATABLE READ, which reads with locks also under READ_COMMITTED_SNAPSHOT;
// Babelfish, where REPEATABLE READ is refused or is snapshot isolation,
// under READ COMMITTED.
func TestEngineFromServerProperty(t *testing.T) {
	onSQLServer := engineFor(sql.NullString{})
	if onSQLServer.babelfish || onSQLServer.lockingReadIsolation != sql.LevelRepeatableRead {
		t.Errorf("SQL Server (property NULL): %+v", onSQLServer)
	}
	onBabelfish := engineFor(sql.NullString{String: "4.2.0", Valid: true})
	if !onBabelfish.babelfish || onBabelfish.lockingReadIsolation != sql.LevelReadCommitted {
		t.Errorf("Babelfish (property set): %+v", onBabelfish)
	}
}

// openFencedTx starts a fenced transaction under lease and keeps it open,
// its fence checked, until the returned function is called; that function
// commits it and returns its error.
func openFencedTx(t *testing.T, db *DB, lease core.Lease) (commit func() error) {
	t.Helper()
	checked, release := make(chan error, 1), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.storeOn(db.queries).inFencedTx(context.Background(), lease.Fence(), func(*sqlserverdb.Queries) error {
			checked <- nil
			<-release
			return nil
		})
	}()
	select {
	case <-checked:
	case err := <-done:
		t.Fatalf("fenced transaction under a held lease: %v", err)
	}
	var closed bool
	t.Cleanup(func() {
		if !closed {
			close(release)
			<-done
		}
	})
	return func() error {
		closed = true
		close(release)
		return <-done
	}
}

// TestTakeoverWaitsForFencedTransactions checks the lease lock on a real
// server (SQL Server or Babelfish): once a fenced transaction has checked
// its fence, a takeover of the (meanwhile released) lease cannot move the
// epoch until that transaction has committed, so a fenced write always
// commits before its successor's epoch begins. The takeover's lock wait is
// bounded short here, so its refusal shows the wait without timing it.
func TestTakeoverWaitsForFencedTransactions(t *testing.T) {
	db, dsn := migratedDB(t, databaseOptions{})
	leases := db.Leases()
	// The fenced transaction checks its fence under a long lease, which
	// then ends by a release while it is open (a short lease could expire
	// before the check on a slow machine).
	old := leasetest.MustAcquire(t, leases, core.DefaultLeaseName, "old-leader", leasetest.LongLease)
	commit := openFencedTx(t, db, old)
	if err := leases.Release(t.Context(), old.Fence()); err != nil {
		t.Fatalf("release while a fenced transaction is open: %v", err)
	}

	impatient, err := Open(context.Background(), Config{DSN: dsn, LeaseLockTimeout: 200 * time.Millisecond, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = impatient.Close() })
	takeover := ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "new-leader", Duration: time.Hour}
	if l, ok, err := impatient.Leases().Acquire(t.Context(), takeover); ok || !errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("takeover while a fenced transaction of the old epoch is open: %+v acquired=%v err=%v; want the lease lock refused", l, ok, err)
	}
	if err := commit(); err != nil {
		t.Fatalf("the fenced transaction could not commit: %v", err)
	}
	// Now the takeover goes through; asked with the default lock timeout,
	// since on a loaded machine 200 ms can pass before even a free lock is
	// granted.
	l, ok, err := leases.Acquire(t.Context(), takeover)
	if err != nil || !ok || l.Epoch != old.Epoch+1 {
		t.Fatalf("takeover after the fenced transaction: %+v acquired=%v err=%v", l, ok, err)
	}
}

// TestRenewalNeverWaitsForFencedTransactions checks the other half: while a
// fenced transaction holds the lease lock, the holder's renewal goes
// through at once (its context is short; a renewal that waited for the
// fenced transaction would outlive it), and the fenced transaction still
// commits under the renewed lease.
func TestRenewalNeverWaitsForFencedTransactions(t *testing.T) {
	db, _ := migratedDB(t, databaseOptions{})
	leases := db.Leases()
	lease := leasetest.MustAcquire(t, leases, core.DefaultLeaseName, "leader", time.Minute)
	commit := openFencedTx(t, db, lease)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	renewed, err := leases.Renew(ctx, ports.RenewLeaseParams{Fence: lease.Fence(), Duration: time.Minute})
	if err != nil || renewed.Epoch != lease.Epoch {
		t.Fatalf("renewal while a fenced transaction is open: %+v %v", renewed, err)
	}
	if err := commit(); err != nil {
		t.Fatalf("fenced transaction after the renewal: %v", err)
	}
}

// TestFencedWriteQueuesBehindAWaitingTakeover checks the order the lease
// lock grants in (fence.go): a fenced write that asks for the lock after a
// takeover has queued for it waits behind that takeover, rather than
// joining the fenced transaction that holds the lock. Were Shared requests
// granted past a queued IntentExclusive one, a leader whose writes never
// pause would hold a takeover off until its LeaseLockTimeout. The late
// write's lock wait is bounded short: refused (core.ErrStoreUnavailable)
// while the takeover waits, it shows the queue without timing it; granted
// at once, it would find the released lease and answer core.ErrFenced.
// Once the first transaction commits, the takeover moves the epoch and the
// late write, asked again, is fenced.
func TestFencedWriteQueuesBehindAWaitingTakeover(t *testing.T) {
	db, dsn := migratedDB(t, databaseOptions{})
	ctx := t.Context()
	leases := db.Leases()
	old := leasetest.MustAcquire(t, leases, core.DefaultLeaseName, "old-leader", leasetest.LongLease)

	// The first fenced transaction, as inFencedTx makes it, on a session
	// whose spid the wait below looks for.
	first := holdLeaseLock(t, db, sharedLeaseLockSQL)
	held, err := db.q.WithTx(first).FenceHolds(ctx, sqlserverdb.FenceHoldsParams{
		LeaseName: core.DefaultLeaseName, HolderID: old.HolderID, LeaseEpoch: old.Epoch})
	if err != nil || held == 0 {
		t.Fatalf("the first fenced transaction's fence check: held=%d err=%v", held, err)
	}
	var spid int
	if err := first.QueryRowContext(ctx, "SELECT @@SPID").Scan(&spid); err != nil {
		t.Fatal(err)
	}
	if err := leases.Release(ctx, old.Fence()); err != nil {
		t.Fatalf("release while a fenced transaction is open: %v", err)
	}

	// The late writer is opened before the takeover asks, so that its
	// login is not counted against the takeover's lock timeout.
	impatient, err := Open(context.Background(), Config{DSN: dsn, LeaseLockTimeout: 300 * time.Millisecond, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = impatient.Close() })
	late := func() error {
		return impatient.storeOn(impatient.queries).inFencedTx(ctx, old.Fence(), func(*sqlserverdb.Queries) error { return nil })
	}

	type acquired struct {
		lease core.Lease
		ok    bool
		err   error
	}
	takeover := make(chan acquired, 1)
	go func() {
		l, ok, err := leases.Acquire(context.WithoutCancel(ctx), ports.AcquireLeaseParams{
			LeaseName: core.DefaultLeaseName, HolderID: "new-leader", Duration: time.Hour})
		takeover <- acquired{l, ok, err}
	}()
	waitUntilBlocked(t, db, spid, func() {
		select {
		case got := <-takeover:
			t.Fatalf("the takeover answered while a fenced transaction held the lock: %+v", got)
		default:
		}
	})

	if err := late(); !errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("a fenced write asked while the takeover waits: %v; want its lease lock refused (core.ErrStoreUnavailable), queued behind the takeover", err)
	}

	if err := first.Commit(); err != nil {
		t.Fatalf("the first fenced transaction could not commit: %v", err)
	}
	got := <-takeover
	if got.err != nil || !got.ok || got.lease.Epoch != old.Epoch+1 {
		t.Fatalf("the takeover after the first transaction committed: %+v", got)
	}
	if err := late(); !errors.Is(err, core.ErrFenced) {
		t.Fatalf("the late fenced write after the takeover: %v; want core.ErrFenced", err)
	}
}

package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/pressly/goose/v3/lock"
)

// The statements of the migration lock. They run on goose's plain
// connection (no query-text processing), so they use named parameters.
const (
	// sp_getapplock returns 0 or 1 when the lock is granted, -1 on timeout,
	// -2 when cancelled, -3 when chosen as a deadlock victim and -999 on a
	// parameter error.
	getAppLockSQL = `DECLARE @result int;
EXEC @result = sp_getapplock @Resource = @resource, @LockMode = 'Exclusive', @LockOwner = 'Session', @LockTimeout = @timeout_ms;
SELECT @result;`
	releaseAppLockSQL = `EXEC sp_releaseapplock @Resource = @resource, @LockOwner = 'Session';`
)

// appLock is the SQL Server session locker goose lacks: an exclusive,
// session-owned sp_getapplock on the connection goose migrates through, so
// instances started together with --migrate run their migrations one after
// the other. A session lock (not a transaction lock) spans the several
// transactions goose runs; if the process dies, the server frees it with
// the session.
type appLock struct {
	resource string
	timeout  time.Duration
}

var _ lock.SessionLocker = (*appLock)(nil)

func newAppLock(resource string, timeout time.Duration) *appLock {
	return &appLock{resource: resource, timeout: timeout}
}

// SessionLock waits up to the lock timeout for the migration lock.
func (l *appLock) SessionLock(ctx context.Context, conn *sql.Conn) error {
	var result int
	err := conn.QueryRowContext(ctx, getAppLockSQL,
		sql.Named("resource", l.resource),
		sql.Named("timeout_ms", lockTimeoutMillis(l.timeout)),
	).Scan(&result)
	if err != nil {
		return fmt.Errorf("sqlserver: take migration lock: %w", mapError(err))
	}
	if result < 0 {
		return fmt.Errorf("sqlserver: take migration lock %q: %s", l.resource, appLockResult(result, l.timeout))
	}
	return nil
}

// SessionUnlock releases the migration lock.
func (l *appLock) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, releaseAppLockSQL, sql.Named("resource", l.resource)); err != nil {
		return fmt.Errorf("sqlserver: release migration lock: %w", mapError(err))
	}
	return nil
}

// appLockResult explains a negative sp_getapplock result.
func appLockResult(result int, timeout time.Duration) string {
	switch result {
	case -1:
		return fmt.Sprintf("another instance held it for longer than %v", timeout)
	case -2:
		return "the lock request was cancelled"
	case -3:
		return "chosen as a deadlock victim"
	default:
		return fmt.Sprintf("sp_getapplock returned %d", result)
	}
}

package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// The lease lock's pin. Every instance holds the lease lock of the leases
// it takes part in, and the rehearsal's, in IntentShared mode for its
// session, on a connection of its own, for as long as it runs. The pin
// conflicts with nothing the store asks for (Shared for fenced writes,
// IntentExclusive for takeovers; only Exclusive conflicts with
// IntentShared) and changes no one's wait, on either server.
//
// It is there for Babelfish 4.2, whose sp_getapplock keeps the lock names
// in a shared cache of 32 entries counted by their holders: when the last
// holder lets go while another session is looking the name up, the lookup
// recreates the entry empty and leaks it, and after five leaks on one name
// every request for it answers -999 until the server restarts (applock.c;
// docs/sqlserver.md, "Babelfish for PostgreSQL"). Two fenced writers taking
// the lease lock in turn lost the name within seconds. With a pin, the
// count of the name's holders never reaches zero while an instance runs,
// so the race has no moment to happen in. SQL Server has no such cache;
// there the pin is one idle session per instance, kept so that both
// servers run one text.

// pinCheckEvery is how long a pin is trusted before its connection is
// pinged again. A session-owned lock lasts as long as its session, so a
// connection that answers still holds its pins; one that does not is
// replaced and the pins taken again on the new one.
const pinCheckEvery = 10 * time.Second

// pinLeaseLockSQL takes a lease lock in IntentShared mode for the session:
// $1 is the resource, $2 the timeout in milliseconds. It answers
// sp_getapplock's status, as leaseLockSQL does.
const pinLeaseLockSQL = `DECLARE @status int;
EXEC @status = sp_getapplock @Resource = $1, @LockMode = 'IntentShared', @LockOwner = 'Session', @LockTimeout = $2;
SELECT @status;`

// leaseLockPin holds the pins of one DB on its own one-connection pool.
type leaseLockPin struct {
	pool    *sql.DB
	timeout time.Duration
	locks   lockNames

	mu sync.Mutex
	// conn is the session the pins belong to, nil until the first pin and
	// after a failed check.
	conn *sql.Conn
	// pinned holds the resources pinned on conn.
	pinned map[string]bool
	// checkedAt is when conn last answered (the monotonic clock).
	checkedAt time.Time
}

// newLeaseLockPin returns the pins of a DB, taken on pool, which it owns.
func newLeaseLockPin(pool *sql.DB, timeout time.Duration, locks lockNames) *leaseLockPin {
	pool.SetMaxOpenConns(1)
	pool.SetMaxIdleConns(1)
	return &leaseLockPin{pool: pool, timeout: timeout, locks: locks, pinned: map[string]bool{}}
}

// hold makes sure leaseName's lease lock and the rehearsal's are pinned on
// a live session. It costs nothing while they are and their session
// answered in the last pinCheckEvery, and one ping otherwise.
func (p *leaseLockPin) hold(ctx context.Context, leaseName string) error {
	resources := []string{p.locks.lease(leaseName), p.locks.lease(rehearsalLeaseName)}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil && time.Since(p.checkedAt) >= pinCheckEvery {
		if err := p.conn.PingContext(ctx); err != nil {
			p.dropLocked()
		} else {
			p.checkedAt = time.Now()
		}
	}
	for _, resource := range resources {
		if err := p.pinLocked(ctx, resource); err != nil {
			return err
		}
	}
	return nil
}

// pinLocked pins resource on the session unless it is pinned already.
func (p *leaseLockPin) pinLocked(ctx context.Context, resource string) error {
	if p.conn != nil && p.pinned[resource] {
		return nil
	}
	if p.conn == nil {
		conn, err := p.pool.Conn(ctx)
		if err != nil {
			return fmt.Errorf("sqlserver: pin the lease lock: %w", mapError(err))
		}
		p.conn, p.checkedAt = conn, time.Now()
	}
	var status int
	if err := p.conn.QueryRowContext(ctx, pinLeaseLockSQL, resource, lockTimeoutMillis(p.timeout)).Scan(&status); err != nil {
		p.dropLocked()
		return fmt.Errorf("sqlserver: pin the lease lock %q: %w", resource, mapError(err))
	}
	if status < 0 {
		return fmt.Errorf("%w: sqlserver: lease lock %q not pinned: %s", core.ErrStoreUnavailable, resource, appLockResult(status, p.timeout))
	}
	p.pinned[resource] = true
	return nil
}

// dropLocked gives up the session and forgets its pins. Closing the
// connection ends the session on the server when it still lives, and with
// it the pins; a broken connection is discarded by the pool.
func (p *leaseLockPin) dropLocked() {
	if p.conn != nil {
		// driver.ErrBadConn from Raw makes database/sql close the
		// connection rather than keep it idle with its pins.
		_ = p.conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = p.conn.Close()
	}
	p.conn, p.pinned = nil, map[string]bool{}
}

// close ends the pins' session and closes their pool.
func (p *leaseLockPin) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil {
		_ = p.conn.Close()
		p.conn = nil
	}
	return p.pool.Close()
}

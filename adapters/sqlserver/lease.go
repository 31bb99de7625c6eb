package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// leaseStore implements ports.LeaseStore over one SQL Server database.
type leaseStore struct {
	db *DB
}

var _ ports.LeaseStore = (*leaseStore)(nil)

// Column sizes of submission_manager_leases (the lease spec's).
const (
	maxLeaseNameLen = 64
	maxHolderIDLen  = 128
)

// validateLeaseNames refuses names the varchar columns cannot hold exactly.
func validateLeaseNames(leaseName, holderID string) error {
	return errors.Join(checkLeaseText("lease name", leaseName, maxLeaseNameLen),
		checkLeaseText("holder id", holderID, maxHolderIDLen))
}

// checkLeaseText refuses a lease name or holder id that would not compare
// exactly in SQL Server. Go strings travel as nvarchar and are cast to the
// varchar columns' type in the queries, so a non-ASCII character would be
// replaced on the way and two different holders could compare equal; and a
// trailing space is ignored by SQL Server's padded comparison.
func checkLeaseText(what, s string, maxLen int) error {
	switch {
	case s == "":
		return fmt.Errorf("sqlserver: %s is empty", what)
	case len(s) > maxLen:
		return fmt.Errorf("sqlserver: %s %q is longer than %d characters", what, s, maxLen)
	case strings.HasSuffix(s, " "):
		return fmt.Errorf("sqlserver: %s %q ends with a space", what, s)
	}
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			return fmt.Errorf("sqlserver: %s %q must be printable ASCII", what, s)
		}
	}
	return nil
}

// durationMillis converts a lease duration to the int milliseconds DATEADD
// takes.
func durationMillis(d time.Duration) (int32, error) {
	ms := d.Milliseconds()
	if d < 0 || ms > math.MaxInt32 {
		return 0, fmt.Errorf("sqlserver: lease duration %v out of range", d)
	}
	return int32(ms), nil
}

// Acquire takes the lease over when it has expired, or creates it when it
// does not exist. Each path is one conditional statement evaluated in
// database time, and neither can succeed for two callers: the take-over
// UPDATE re-evaluates expires_at <= SYSUTCDATETIME() under the row's update
// lock, and the INSERT is decided by the primary key. An existing row costs
// one round trip, taken over or not (acquireExisting).
func (l *leaseStore) Acquire(ctx context.Context, p ports.AcquireLeaseParams) (core.Lease, bool, error) {
	if err := validateLeaseNames(p.LeaseName, p.HolderID); err != nil {
		return core.Lease{}, false, err
	}
	ms, err := durationMillis(p.Duration)
	if err != nil {
		return core.Lease{}, false, err
	}
	if err := l.db.pin.hold(ctx, p.LeaseName); err != nil {
		return core.Lease{}, false, err
	}
	current, taken, found, err := l.acquireExisting(ctx, p.LeaseName, p.HolderID, ms, false)
	if err != nil || taken {
		return current, taken, err
	}
	if found {
		// Held and unexpired (or taken over by another follower just now).
		if current.HolderID != p.HolderID && farFromExpiry(current, p.Duration) {
			l.keepTakeoverWarm(ctx)
			l.db.keepExecutorWarm(ctx, p.Duration)
		}
		return current, false, nil
	}
	lease, err := l.insert(ctx, p, ms)
	if errors.Is(err, errDuplicateKey) {
		// Another instance created the row first.
		current, _, err = l.Read(ctx, p.LeaseName)
		return current, false, err
	}
	if err != nil {
		return core.Lease{}, false, err
	}
	return lease, true, nil
}

// acquireLeaseSQL calls dbo.submission_acquire_lease (migration 00021): $1
// the lease name, $2 the holder, $3 the duration in milliseconds, $4 the
// lease lock's resource, $5 its timeout in milliseconds, $6 whether this is
// a rehearsal. It answers the row as it is after the call, with taken, or
// no row when there is no lease of that name.
const acquireLeaseSQL = `EXEC dbo.submission_acquire_lease @lease_name = $1, @holder_id = $2, @duration_ms = $3,
    @lock_resource = $4, @lock_timeout = $5, @rehearsal = $6`

// acquireExisting takes leaseName over for holderID when it has expired and
// answers the row as it then is, in one round trip on the lease pool:
// found is false when there is no row, taken true when this call took it.
// Only an expired lease takes the lease lock, in IntentExclusive mode
// (fence.go), in the same transaction as the conditional UPDATE: the lock
// waits until every fenced transaction of the old epoch that passed its
// check has committed, and the UPDATE re-checks the expiry under it (the
// holder may have renewed meanwhile). A lease that holds is never locked,
// so a follower's periodic acquire costs the leader's writes nothing. A
// rehearsal runs the takeover's statements on a name without a row
// (PrepareTakeover).
func (l *leaseStore) acquireExisting(ctx context.Context, leaseName, holderID string, ms int32, rehearsal bool) (lease core.Lease, taken, found bool, err error) {
	err = l.db.retryDeadlocks(ctx, func() error {
		var tookOver int
		err := l.db.leases.QueryRowContext(ctx, acquireLeaseSQL, leaseName, holderID, ms,
			setString(l.db.locks.lease(leaseName)), lockTimeoutMillis(l.db.cfg.LeaseLockTimeout), rehearsal).Scan(
			&tookOver, &lease.LeaseName, &lease.HolderID, &lease.Epoch, &lease.AcquiredAt, &lease.RenewedAt, &lease.ExpiresAt, &lease.ReadAt)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return mapError(err)
		}
		taken, found = tookOver == 1, true
		return nil
	})
	if err != nil || !found {
		return core.Lease{}, false, false, err
	}
	return inUTC(lease), taken, true, nil
}

// inUTC is lease with its times in UTC, as every lease the store answers
// has them (getLease's too).
func inUTC(lease core.Lease) core.Lease {
	lease.AcquiredAt, lease.RenewedAt, lease.ExpiresAt, lease.ReadAt = lease.AcquiredAt.UTC(), lease.RenewedAt.UTC(), lease.ExpiresAt.UTC(), lease.ReadAt.UTC()
	return lease
}

// farFromExpiry reports whether shown had more than half of duration left
// when it was read: a follower's warm-ups run only then (keepTakeoverWarm,
// keepExecutorWarm), so that they end long before a takeover they could
// otherwise delay.
func farFromExpiry(shown core.Lease, duration time.Duration) bool {
	return !shown.ReadAt.IsZero() && shown.ExpiresAt.Sub(shown.ReadAt) > duration/2
}

// insert creates the lease row at epoch 1 and reads it back in the same
// transaction. A lost race surfaces as errDuplicateKey.
func (l *leaseStore) insert(ctx context.Context, p ports.AcquireLeaseParams, ms int32) (core.Lease, error) {
	var lease core.Lease
	err := l.db.inLeaseTx(ctx, func(_ *sql.Tx, q *sqlserverdb.Queries) (err error) {
		lease, err = createLease(ctx, q, p.LeaseName, p.HolderID, ms)
		return err
	})
	return lease, err
}

// createLease inserts the lease row at epoch 1 through q and reads it back:
// insert's statements, which the lease's warm-up also runs (warmLeases).
func createLease(ctx context.Context, q *sqlserverdb.Queries, leaseName, holderID string, ms int32) (core.Lease, error) {
	err := q.InsertLease(ctx, sqlserverdb.InsertLeaseParams{LeaseName: leaseName, HolderID: holderID, DurationMs: ms})
	if err != nil {
		return core.Lease{}, mapError(err)
	}
	return getLease(ctx, q, leaseName)
}

// renewLeaseSQL extends the lease for the same holder at the same epoch
// while it is unexpired in database time, and answers the renewed row, or
// no row when the fence does not hold: one statement in autocommit, one
// round trip, so a renewal spends as little as it can on a busy server
// before the lease runs out. The derived table "clock" reads the database
// clock once, as every lease statement does (db/queries/sqlserver/leases.sql);
// OUTPUT reads only the updated row. Hand-written because sqlc cannot parse
// OUTPUT; TestHandWrittenSQLIsTSQL parses it.
const renewLeaseSQL = `UPDATE submission_manager_leases
SET renewed_at = clock.now,
    expires_at = DATEADD(millisecond, CAST($1 AS int), clock.now)
OUTPUT inserted.lease_name, inserted.holder_id, inserted.lease_epoch,
       inserted.acquired_at, inserted.renewed_at, inserted.expires_at
FROM (SELECT SYSUTCDATETIME() AS now) AS clock
WHERE lease_name = CAST($2 AS varchar(64))
  AND holder_id = CAST($3 AS varchar(128))
  AND lease_epoch = CAST($4 AS bigint)
  AND expires_at > clock.now`

// Renew extends the lease for the same holder at the same epoch while it is
// unexpired in database time; otherwise it returns core.ErrFenced.
func (l *leaseStore) Renew(ctx context.Context, p ports.RenewLeaseParams) (core.Lease, error) {
	if err := validateLeaseNames(p.Fence.LeaseName, p.Fence.HolderID); err != nil {
		return core.Lease{}, err
	}
	ms, err := durationMillis(p.Duration)
	if err != nil {
		return core.Lease{}, err
	}
	var lease core.Lease
	err = l.db.retryDeadlocks(ctx, func() error {
		err := l.db.leases.QueryRowContext(ctx, renewLeaseSQL, ms, p.Fence.LeaseName, p.Fence.HolderID, p.Fence.Epoch).Scan(
			&lease.LeaseName, &lease.HolderID, &lease.Epoch, &lease.AcquiredAt, &lease.RenewedAt, &lease.ExpiresAt)
		if errors.Is(err, sql.ErrNoRows) {
			return core.ErrFenced
		}
		return mapError(err)
	})
	if err != nil {
		return core.Lease{}, err
	}
	// The renewal stands whatever the pin answers: a pin that cannot be
	// checked is a risk on Babelfish, not a reason to lose the lease.
	if err := l.db.pin.hold(ctx, p.Fence.LeaseName); err != nil {
		l.db.log.WarnContext(ctx, "the lease lock is not pinned", "lease", p.Fence.LeaseName, "err", err)
	}
	lease = inUTC(lease)
	// renewed_at is the statement's clock, so it is also when the row was read.
	lease.ReadAt = lease.RenewedAt
	return lease, nil
}

// Release expires the lease now, fenced by holder and epoch, so a follower
// takes over at its next acquire.
func (l *leaseStore) Release(ctx context.Context, f core.Fence) error {
	if err := validateLeaseNames(f.LeaseName, f.HolderID); err != nil {
		return err
	}
	n, err := l.db.leaseQ.ReleaseLease(ctx, sqlserverdb.ReleaseLeaseParams{
		LeaseName: f.LeaseName, HolderID: f.HolderID, LeaseEpoch: f.Epoch})
	if err != nil {
		return mapError(err)
	}
	if n == 0 {
		return core.ErrFenced
	}
	return nil
}

// Read returns the lease row as the database has it.
func (l *leaseStore) Read(ctx context.Context, leaseName string) (core.Lease, bool, error) {
	if err := checkLeaseText("lease name", leaseName, maxLeaseNameLen); err != nil {
		return core.Lease{}, false, err
	}
	lease, err := getLease(ctx, l.db.leaseQ, leaseName)
	if errors.Is(err, errLeaseMissing) {
		return core.Lease{}, false, nil
	}
	if err != nil {
		return core.Lease{}, false, err
	}
	return lease, true, nil
}

// errLeaseMissing is getLease's "no such row".
var errLeaseMissing = errors.New("sqlserver: lease row missing")

func getLease(ctx context.Context, q *sqlserverdb.Queries, leaseName string) (core.Lease, error) {
	row, err := q.ReadLease(ctx, leaseName)
	if errors.Is(err, sql.ErrNoRows) {
		return core.Lease{}, errLeaseMissing
	}
	if err != nil {
		return core.Lease{}, mapError(err)
	}
	return core.Lease{
		LeaseName:  row.LeaseName,
		HolderID:   row.HolderID,
		Epoch:      row.LeaseEpoch,
		AcquiredAt: row.AcquiredAt.UTC(),
		RenewedAt:  row.RenewedAt.UTC(),
		ExpiresAt:  row.ExpiresAt.UTC(),
		ReadAt:     row.ReadAt.UTC(),
	}, nil
}

package sqlite

import (
	"context"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// leaseStore is ports.LeaseStore on a DB. Each operation is one conditional
// statement evaluated in SQLite's time; SQLite runs one writer at a time, so
// of concurrent acquirers exactly one statement finds the lease expired.
type leaseStore struct{ db *DB }

var _ ports.LeaseStore = (*leaseStore)(nil)

// Acquire takes the lease when it is missing or expired. When another holder
// has it, the returned lease shows that holder, read in the same transaction.
func (l *leaseStore) Acquire(ctx context.Context, p ports.AcquireLeaseParams) (core.Lease, bool, error) {
	if p.Duration < 0 {
		return core.Lease{}, false, fmt.Errorf("sqlite: acquire lease: negative duration %s", p.Duration)
	}
	var (
		lease    core.Lease
		acquired bool
	)
	err := l.db.doLease(ctx, "acquire lease", func(ctx context.Context, q *writeTx) error {
		row, err := q.AcquireLease(ctx, sqlitedb.AcquireLeaseParams{
			LeaseName:  p.LeaseName,
			HolderID:   p.HolderID,
			DurationNs: p.Duration.Nanoseconds(),
		})
		if err == nil {
			lease, acquired = leaseFromRow(row), true
			return nil
		}
		if !noRows(err) {
			return err
		}
		held, err := q.ReadLease(ctx, p.LeaseName)
		if err != nil {
			return err
		}
		lease = leaseFromRead(held)
		return nil
	})
	return lease, acquired, err
}

// Renew extends the lease from the database's now, for the same holder and
// epoch while unexpired; anything else is core.ErrFenced.
func (l *leaseStore) Renew(ctx context.Context, p ports.RenewLeaseParams) (core.Lease, error) {
	if p.Duration < 0 {
		return core.Lease{}, fmt.Errorf("sqlite: renew lease: negative duration %s", p.Duration)
	}
	var lease core.Lease
	err := l.db.doLease(ctx, "renew lease", func(ctx context.Context, q *writeTx) error {
		row, err := q.RenewLease(ctx, sqlitedb.RenewLeaseParams{
			LeaseName:  p.Fence.LeaseName,
			HolderID:   p.Fence.HolderID,
			LeaseEpoch: p.Fence.Epoch,
			DurationNs: p.Duration.Nanoseconds(),
		})
		if noRows(err) {
			return core.ErrFenced
		}
		if err != nil {
			return err
		}
		lease = leaseFromRow(row)
		return nil
	})
	return lease, err
}

// Release expires the lease at the database's now, so another instance can
// acquire it at once; a lease no longer held is core.ErrFenced.
func (l *leaseStore) Release(ctx context.Context, f core.Fence) error {
	return l.db.doLease(ctx, "release lease", func(ctx context.Context, q *writeTx) error {
		n, err := q.ReleaseLease(ctx, sqlitedb.ReleaseLeaseParams{
			LeaseName: f.LeaseName, HolderID: f.HolderID, LeaseEpoch: f.Epoch,
		})
		if err != nil {
			return err
		}
		if n == 0 {
			return core.ErrFenced
		}
		return nil
	})
}

// Read returns the lease row as stored; found is false when there is none.
func (l *leaseStore) Read(ctx context.Context, leaseName string) (core.Lease, bool, error) {
	row, err := l.db.readQueries(ctx).ReadLease(ctx, leaseName)
	if noRows(err) {
		return core.Lease{}, false, nil
	}
	if err != nil {
		return core.Lease{}, false, mapError("read lease", err)
	}
	return leaseFromRead(row), true, nil
}

package ports

import (
	"context"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// AcquireLeaseParams asks for the lease. Duration is added to database time.
type AcquireLeaseParams struct {
	LeaseName string
	HolderID  string
	Duration  time.Duration
}

// RenewLeaseParams extends a held lease; it succeeds only for the same holder
// at the same epoch while the lease is unexpired in database time.
type RenewLeaseParams struct {
	Fence    core.Fence
	Duration time.Duration
}

// LeaseStore is the SQL-backed leadership lease. Every comparison happens in
// database time inside a single conditional statement, so concurrent callers
// on many instances can never both win.
type LeaseStore interface {
	// Acquire inserts the lease row (epoch 1) when missing, or takes it over
	// when expired, incrementing the epoch on every success (also when the
	// same holder re-acquires). acquired is false when another unexpired
	// holder has it; the returned Lease then shows that holder.
	Acquire(ctx context.Context, p AcquireLeaseParams) (lease core.Lease, acquired bool, err error)
	// Renew extends the lease. It returns core.ErrFenced when the lease is no
	// longer held by the fence's holder and epoch or has expired.
	Renew(ctx context.Context, p RenewLeaseParams) (core.Lease, error)
	// Release expires the lease at once, fenced by its epoch, so a follower
	// takes over at its next acquire tick. Releasing a lease no longer held
	// returns core.ErrFenced.
	Release(ctx context.Context, fence core.Fence) error
	// Read returns the lease row; core.ErrIntentNotFound is never returned,
	// a missing row yields found=false.
	Read(ctx context.Context, leaseName string) (lease core.Lease, found bool, err error)
}

// TakeoverPreparer is a LeaseStore whose first takeover on a connection
// pays one-time costs there (Babelfish plans a session's statements and its
// first sp_getapplock on their first execution: 0.3 to 0.6 s measured). A
// follower about to try a takeover calls PrepareTakeover while it waits
// for the expiry, so the takeover itself runs warm. It must write nothing
// and take no lock a leader or another follower could wait for.
type TakeoverPreparer interface {
	PrepareTakeover(ctx context.Context, leaseName string) error
}

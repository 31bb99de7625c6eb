package core

import "time"

// DefaultLeaseName is the one lease row that elects the executor.
const DefaultLeaseName = "submission-manager-executor"

// Lease is the state of the leadership lease as the database last reported
// it. All its times are database time.
type Lease struct {
	LeaseName  string
	HolderID   string
	Epoch      int64
	AcquiredAt time.Time
	RenewedAt  time.Time
	ExpiresAt  time.Time
	// ReadAt is the database's time at which the store read or wrote the
	// row in this state (the statement's own clock); it is not stored.
	// ExpiresAt.Sub(ReadAt) is how long the lease still ran then, which an
	// instance can wait out on its own clock without knowing how far that
	// clock is from the database's.
	ReadAt time.Time
}

// Fence is the token every execution-state write carries. A store applies a
// fenced write only while (LeaseName, HolderID, Epoch) holds an unexpired
// lease in database time, so a paused or partitioned former leader can never
// change execution state after a successor took over.
type Fence struct {
	LeaseName string
	HolderID  string
	Epoch     int64
}

// Fence returns the token for writes made under this lease.
func (l Lease) Fence() Fence {
	return Fence{LeaseName: l.LeaseName, HolderID: l.HolderID, Epoch: l.Epoch}
}

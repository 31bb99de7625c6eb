package ports

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// InstanceRole is what an instance does, as it reports itself.
type InstanceRole string

// The roles of an instance.
const (
	// RoleLeader holds the lease and executes attempts.
	RoleLeader InstanceRole = "leader"
	// RoleFollower competes for the lease and serves the API meanwhile.
	RoleFollower InstanceRole = "follower"
	// RoleAPIOnly serves the API and never competes for the lease.
	RoleAPIOnly InstanceRole = "api-only"
)

// Limits of an instance's record, as the stores keep it.
const (
	MaxHolderIDLen = 128
	MaxVersionLen  = 64
)

// ErrInvalidBeat means a store refused a heartbeat that breaks
// InstanceBeat.Validate's rules, before it wrote anything.
var ErrInvalidBeat = errors.New("invalid instance heartbeat")

// InstanceBeat is one heartbeat: what an instance records of itself.
type InstanceBeat struct {
	// HolderID is the instance's name in the lease: printable ASCII, as
	// the lease keeps it.
	HolderID string
	// Version is the build the instance runs, printable ASCII; empty when
	// the build does not say.
	Version string
	Role    InstanceRole
	// Interval is how often the instance beats; readers judge it stale by
	// it, so instances beating at different rates are judged each by its
	// own. Stores keep it to the millisecond.
	Interval time.Duration
	// Starting says this is the first beat of the process: the record's
	// StartedAt becomes now, also when a record of the same HolderID was
	// left by an earlier process.
	Starting bool
}

// Validate is the rule every store applies to a beat before it writes.
func (b InstanceBeat) Validate() error {
	var problem error
	switch {
	case b.HolderID == "" || len(b.HolderID) > MaxHolderIDLen || !printable(b.HolderID):
		problem = fmt.Errorf("HolderID %q is not 1 to %d characters of printable ASCII, ending in no space", b.HolderID, MaxHolderIDLen)
	case len(b.Version) > MaxVersionLen || !printable(b.Version):
		problem = fmt.Errorf("Version %q is not at most %d characters of printable ASCII, ending in no space", b.Version, MaxVersionLen)
	case b.Role != RoleLeader && b.Role != RoleFollower && b.Role != RoleAPIOnly:
		problem = fmt.Errorf("Role %q is not leader, follower or api-only", b.Role)
	case b.Interval < time.Millisecond || b.Interval > 24*time.Hour:
		problem = fmt.Errorf("Interval %v is not between 1ms and 24h", b.Interval)
	default:
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalidBeat, problem)
}

// printable reports whether s is printable ASCII with no trailing space:
// what the lease's holder_id holds exactly on every store (SQL Server
// ignores trailing spaces when it compares).
func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			return false
		}
	}
	return !strings.HasSuffix(s, " ")
}

// InstanceState is an instance's record as a store reads it, judged in
// the store's own time, so that instances whose clocks disagree are judged
// alike.
type InstanceState struct {
	HolderID string
	Version  string
	Role     InstanceRole
	Interval time.Duration
	// StartedAt is the store's time of the process's first beat;
	// LastSeenAt of its latest.
	StartedAt, LastSeenAt time.Time
	// SeenAgo is the store's time at the read minus LastSeenAt.
	SeenAgo time.Duration
	// HoldsLease says the lease named in the read is held by this
	// HolderID and unexpired at the read.
	HoldsLease bool
}

// InstanceStore keeps each instance's heartbeat in the database, so every
// instance lists the same fleet. Beats are not execution state: nothing
// fences them. Every Store is one.
type InstanceStore interface {
	// BeatInstance records b, stamped with the store's time: it creates
	// the instance's record or updates it (see InstanceBeat.Starting). A
	// beat b.Validate refuses is refused with ErrInvalidBeat.
	BeatInstance(ctx context.Context, b InstanceBeat) error
	// RemoveInstance deletes the record, at a graceful stop, and reports
	// whether there was one.
	RemoveInstance(ctx context.Context, holderID string) (bool, error)
	// ListInstances returns every record, ordered by HolderID, with SeenAgo
	// and HoldsLease (for the lease named leaseName) judged at one instant
	// of the store's time.
	ListInstances(ctx context.Context, leaseName string) ([]InstanceState, error)
	// ForgetInstances deletes the records not seen for longer than
	// notSeenFor, in the store's time, and returns how many.
	ForgetInstances(ctx context.Context, notSeenFor time.Duration) (int64, error)
}

// InstanceStatus is an instance as operators see it.
type InstanceStatus struct {
	InstanceState
	// StaleAfter is how long the instance may go unseen before it is
	// stale: a few of its own heartbeat intervals.
	StaleAfter time.Duration
	// Stale says it has not been seen for longer than StaleAfter: it
	// stopped without saying so, hangs, or cannot reach the database.
	Stale bool
}

// InstanceOverview answers GET /v1/instances.
type InstanceOverview struct {
	// Instances are ordered by HolderID.
	Instances []InstanceStatus
	// Lease is the lease row as stored (found false: nobody ever led).
	// Its holder may have no record (a process that does not beat).
	Lease      core.Lease
	LeaseFound bool
}

// InstanceDirectory is what the application offers about the fleet.
type InstanceDirectory interface {
	Instances(ctx context.Context) (InstanceOverview, error)
}

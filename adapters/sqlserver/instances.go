package sqlserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.InstanceStore = (*store)(nil)

// BeatInstance updates the instance's record in the database's time, and
// inserts it when there is none (the first beat): one round trip on every
// beat but the first. See ports.InstanceStore.
func (s *store) BeatInstance(ctx context.Context, b ports.InstanceBeat) error {
	if err := b.Validate(); err != nil {
		return err
	}
	interval := int32(min(b.Interval.Milliseconds(), math.MaxInt32)) // Validate bounds it to a day
	starting := int32(0)
	if b.Starting {
		starting = 1
	}
	update := sqlserverdb.UpdateInstanceParams{
		HolderID: b.HolderID, Version: b.Version, Role: string(b.Role), IntervalMs: interval, Starting: starting,
	}
	n, err := s.q.UpdateInstance(ctx, update)
	if err != nil || n > 0 {
		return mapError(err)
	}
	err = mapError(s.q.InsertInstance(ctx, sqlserverdb.InsertInstanceParams{
		HolderID: b.HolderID, Version: b.Version, Role: string(b.Role), IntervalMs: interval,
	}))
	if errors.Is(err, errDuplicateKey) {
		// Another process under the same holder id inserted it first.
		_, err = s.q.UpdateInstance(ctx, update)
		return mapError(err)
	}
	return err
}

// RemoveInstance deletes the record. See ports.InstanceStore.
func (s *store) RemoveInstance(ctx context.Context, holderID string) (bool, error) {
	n, err := s.q.RemoveInstance(ctx, holderID)
	return n > 0, mapError(err)
}

// ListInstances reads every record with its age and lease judged at one
// reading of the database's clock. See ports.InstanceStore.
func (s *store) ListInstances(ctx context.Context, leaseName string) ([]ports.InstanceState, error) {
	rows, err := s.q.ListInstances(ctx, leaseName)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]ports.InstanceState, len(rows))
	for i, r := range rows {
		out[i] = ports.InstanceState{
			HolderID: r.HolderID, Version: r.Version, Role: ports.InstanceRole(r.Role),
			Interval:  time.Duration(r.IntervalMs) * time.Millisecond,
			StartedAt: r.StartedAt.UTC(), LastSeenAt: r.LastSeenAt.UTC(),
			// A clock stepped back since the beat reads as just seen.
			SeenAgo:    max(0, time.Duration(r.SeenAgoUs)*time.Microsecond),
			HoldsLease: r.HoldsLease == 1,
		}
	}
	return out, nil
}

// ForgetInstances deletes the records not seen for longer than
// notSeenFor, to the millisecond. See ports.InstanceStore.
func (s *store) ForgetInstances(ctx context.Context, notSeenFor time.Duration) (int64, error) {
	ms := notSeenFor.Milliseconds()
	if ms < 0 || ms > math.MaxInt32 {
		return 0, fmt.Errorf("sqlserver: forget instances: %v is not between 0 and %d ms", notSeenFor, math.MaxInt32)
	}
	n, err := s.q.ForgetInstances(ctx, int32(ms))
	return n, mapError(err)
}

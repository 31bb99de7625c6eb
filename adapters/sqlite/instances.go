package sqlite

import (
	"context"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.InstanceStore = (*store)(nil)

// BeatInstance records the beat in SQLite's time through the single
// writer. See ports.InstanceStore.
func (s *store) BeatInstance(ctx context.Context, b ports.InstanceBeat) error {
	if err := b.Validate(); err != nil {
		return err
	}
	interval := b.Interval.Milliseconds()
	return s.db.writeSingle(ctx, "record instance heartbeat", func(ctx context.Context, q *writeTx) error {
		if b.Starting {
			return q.StartInstance(ctx, sqlitedb.StartInstanceParams{
				HolderID: b.HolderID, Version: b.Version, Role: string(b.Role), IntervalMs: interval,
			})
		}
		return q.BeatInstance(ctx, sqlitedb.BeatInstanceParams{
			HolderID: b.HolderID, Version: b.Version, Role: string(b.Role), IntervalMs: interval,
		})
	})
}

// RemoveInstance deletes the record. See ports.InstanceStore.
func (s *store) RemoveInstance(ctx context.Context, holderID string) (bool, error) {
	var n int64
	err := s.db.writeSingle(ctx, "remove instance", func(ctx context.Context, q *writeTx) error {
		var err error
		n, err = q.RemoveInstance(ctx, holderID)
		return err
	})
	return n > 0, err
}

// ListInstances reads every record with its age and lease judged at one
// reading of SQLite's clock. See ports.InstanceStore.
func (s *store) ListInstances(ctx context.Context, leaseName string) ([]ports.InstanceState, error) {
	rows, err := s.db.reads.ListInstances(ctx, leaseName)
	if err != nil {
		return nil, mapError("list instances", err)
	}
	out := make([]ports.InstanceState, len(rows))
	for i, r := range rows {
		out[i] = ports.InstanceState{
			HolderID: r.HolderID, Version: r.Version, Role: ports.InstanceRole(r.Role),
			Interval:  time.Duration(r.IntervalMs) * time.Millisecond,
			StartedAt: fromNanos(r.StartedAt), LastSeenAt: fromNanos(r.LastSeenAt),
			// A clock stepped back since the beat reads as just seen.
			SeenAgo:    max(0, time.Duration(r.SeenAgoNs)),
			HoldsLease: r.HoldsLease == 1,
		}
	}
	return out, nil
}

// ForgetInstances deletes the records not seen for longer than
// notSeenFor. See ports.InstanceStore.
func (s *store) ForgetInstances(ctx context.Context, notSeenFor time.Duration) (int64, error) {
	var n int64
	err := s.db.writeSingle(ctx, "forget instances", func(ctx context.Context, q *writeTx) error {
		var err error
		n, err = q.ForgetInstances(ctx, int64(notSeenFor))
		return err
	})
	return n, err
}

package memstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.InstanceStore = (*Store)(nil)

// instanceRecord is one instance's heartbeat as the store keeps it.
type instanceRecord struct {
	beat                  ports.InstanceBeat
	startedAt, lastSeenAt time.Time
}

// BeatInstance records the beat in the store's time. See
// ports.InstanceStore.
func (s *Store) BeatInstance(ctx context.Context, b ports.InstanceBeat) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := b.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	if s.instances == nil {
		s.instances = make(map[string]instanceRecord)
	}
	r, ok := s.instances[b.HolderID]
	if !ok || b.Starting {
		r.startedAt = now
	}
	b.Starting = false
	r.beat, r.lastSeenAt = b, now
	s.instances[b.HolderID] = r
	return nil
}

// RemoveInstance deletes the record. See ports.InstanceStore.
func (s *Store) RemoveInstance(ctx context.Context, holderID string) (bool, error) {
	if err := ctxErr(ctx); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.instances[holderID]
	delete(s.instances, holderID)
	return ok, nil
}

// ListInstances judges every record at one reading of the store's clock.
// See ports.InstanceStore.
func (s *Store) ListInstances(ctx context.Context, leaseName string) ([]ports.InstanceState, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	lease, leased := s.leases[leaseName]
	out := make([]ports.InstanceState, 0, len(s.instances))
	for id, r := range s.instances {
		out = append(out, ports.InstanceState{
			HolderID: id, Version: r.beat.Version, Role: r.beat.Role, Interval: r.beat.Interval,
			StartedAt: r.startedAt, LastSeenAt: r.lastSeenAt, SeenAgo: now.Sub(r.lastSeenAt),
			HoldsLease: leased && lease.HolderID == id && lease.ExpiresAt.After(now),
		})
	}
	slices.SortFunc(out, func(a, b ports.InstanceState) int { return strings.Compare(a.HolderID, b.HolderID) })
	return out, nil
}

// ForgetInstances deletes the records not seen for longer than notSeenFor.
// See ports.InstanceStore.
func (s *Store) ForgetInstances(ctx context.Context, notSeenFor time.Duration) (int64, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cutoff := s.clock.Now().Add(-notSeenFor)
	var n int64
	for id, r := range s.instances {
		if r.lastSeenAt.Before(cutoff) {
			delete(s.instances, id)
			n++
		}
	}
	return n, nil
}

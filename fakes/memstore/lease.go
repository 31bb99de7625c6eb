package memstore

import (
	"context"
	"errors"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Acquire inserts the lease at epoch 1 when the row is missing, or takes it
// over at the next epoch when it has expired in the store's time (also for
// the same holder). While another holder's lease is unexpired it returns
// that lease with acquired=false. The predicate expires_at <= now is the
// exact complement of Renew's, so an acquire and a renew never both win.
func (s *Store) Acquire(ctx context.Context, p ports.AcquireLeaseParams) (core.Lease, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return core.Lease{}, false, err
	}
	if p.LeaseName == "" || p.HolderID == "" || p.Duration < 0 {
		return core.Lease{}, false, errors.New("memstore: acquire: LeaseName, HolderID and a non-negative Duration are required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	l, ok := s.leases[p.LeaseName]
	if ok && l.ExpiresAt.After(now) {
		l.ReadAt = now
		return l, false, nil
	}
	l = core.Lease{
		LeaseName:  p.LeaseName,
		HolderID:   p.HolderID,
		Epoch:      l.Epoch + 1,
		AcquiredAt: now,
		RenewedAt:  now,
		ExpiresAt:  now.Add(p.Duration),
	}
	s.leases[p.LeaseName] = l
	s.signal()
	l.ReadAt = now
	return l, true, nil
}

// Renew extends the lease from the store's now, keeping its epoch, or
// returns core.ErrFenced when the fence no longer holds it unexpired.
func (s *Store) Renew(ctx context.Context, p ports.RenewLeaseParams) (core.Lease, error) {
	if err := ctxErr(ctx); err != nil {
		return core.Lease{}, err
	}
	if p.Duration < 0 {
		return core.Lease{}, errors.New("memstore: renew: a non-negative Duration is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	if err := checkFence(s.leases, p.Fence, now); err != nil {
		return core.Lease{}, err
	}
	l := s.leases[p.Fence.LeaseName]
	l.RenewedAt = now
	l.ExpiresAt = now.Add(p.Duration)
	s.leases[p.Fence.LeaseName] = l
	s.signal()
	l.ReadAt = now
	return l, nil
}

// Release expires the lease at the store's now, so the next Acquire by
// anyone succeeds, or returns core.ErrFenced when the fence no longer holds it.
func (s *Store) Release(ctx context.Context, fence core.Fence) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	if err := checkFence(s.leases, fence, now); err != nil {
		return err
	}
	l := s.leases[fence.LeaseName]
	l.ExpiresAt = now
	s.leases[fence.LeaseName] = l
	s.signal()
	return nil
}

// Read returns the lease row and whether it exists. Every lease the fake
// answers carries its clock's now as ReadAt; the map keeps it zero.
func (s *Store) Read(ctx context.Context, leaseName string) (core.Lease, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return core.Lease{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.leases[leaseName]
	if ok {
		l.ReadAt = s.clock.Now()
	}
	return l, ok, nil
}

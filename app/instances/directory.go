package instances

import (
	"context"
	"errors"

	"github.com/submissionmanager/submission-manager/ports"
)

// Directory lists the fleet for operators: ports.InstanceDirectory.
type Directory struct {
	store  ports.InstanceStore
	leases ports.LeaseStore
}

var _ ports.InstanceDirectory = (*Directory)(nil)

// NewDirectory returns a Directory over the instances' records and the
// lease.
func NewDirectory(store ports.InstanceStore, leases ports.LeaseStore) (*Directory, error) {
	if store == nil || leases == nil {
		return nil, errors.New("instances: a Directory needs the instance store and the lease store")
	}
	return &Directory{store: store, leases: leases}, nil
}

// Instances returns every record with its staleness, judged in the
// store's time by each instance's own interval, and the lease as stored.
func (d *Directory) Instances(ctx context.Context) (ports.InstanceOverview, error) {
	states, err := d.store.ListInstances(ctx, leaseName)
	if err != nil {
		return ports.InstanceOverview{}, err
	}
	out := ports.InstanceOverview{Instances: make([]ports.InstanceStatus, len(states))}
	for i, s := range states {
		after := StaleAfter(s.Interval)
		out.Instances[i] = ports.InstanceStatus{InstanceState: s, StaleAfter: after, Stale: s.SeenAgo > after}
	}
	out.Lease, out.LeaseFound, err = d.leases.Read(ctx, leaseName)
	if err != nil {
		return ports.InstanceOverview{}, err
	}
	return out, nil
}

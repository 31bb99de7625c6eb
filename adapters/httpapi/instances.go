package httpapi

import (
	"context"
	"errors"

	"github.com/submissionmanager/submission-manager/adapters/httpapi/internal/apigen"
	"github.com/submissionmanager/submission-manager/ports"
)

// errInstancesUnavailable answers GET /v1/instances on an API built
// without a directory of instances.
var errInstancesUnavailable = errors.New("this build keeps no record of instances")

// ListInstances returns the instances that share the database.
func (h *handlers) ListInstances(ctx context.Context, _ apigen.ListInstancesRequestObject) (apigen.ListInstancesResponseObject, error) {
	if h.instances == nil {
		return nil, errInstancesUnavailable
	}
	o, err := h.instances.Instances(ctx)
	if err != nil {
		return nil, err
	}
	out := apigen.InstanceList{Instances: make([]apigen.Instance, len(o.Instances))}
	for i, s := range o.Instances {
		out.Instances[i] = instanceFromPort(s)
	}
	if o.LeaseFound {
		out.Lease = &apigen.InstanceLease{HolderId: o.Lease.HolderID, LeaseEpoch: o.Lease.Epoch, ExpiresAt: o.Lease.ExpiresAt}
	}
	return apigen.ListInstances200JSONResponse(out), nil
}

func instanceFromPort(s ports.InstanceStatus) apigen.Instance {
	return apigen.Instance{
		HolderId: s.HolderID, Version: s.Version, Role: apigen.InstanceRole(s.Role), HoldsLease: s.HoldsLease,
		StartedAt: s.StartedAt, LastSeenAt: s.LastSeenAt, SecondsSinceSeen: s.SeenAgo.Seconds(),
		HeartbeatIntervalSeconds: s.Interval.Seconds(), StaleAfterSeconds: s.StaleAfter.Seconds(), Stale: s.Stale,
	}
}

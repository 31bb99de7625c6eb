package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// fleet is an InstanceDirectory with a fixed answer (adapters may not
// import the application's Directory).
type fleet struct {
	overview ports.InstanceOverview
	err      error
}

func (f fleet) Instances(context.Context) (ports.InstanceOverview, error) { return f.overview, f.err }

func TestInstancesTranslateThePort(t *testing.T) {
	seen := time.Date(2026, 2, 2, 12, 0, 1, 250_000_000, time.UTC)
	o := ports.InstanceOverview{
		Instances: []ports.InstanceStatus{
			{InstanceState: ports.InstanceState{HolderID: "node-a", Version: "v1.4.0", Role: ports.RoleLeader, Interval: 10 * time.Second,
				StartedAt: seen.Add(-2 * time.Minute), LastSeenAt: seen, SeenAgo: 3500 * time.Millisecond, HoldsLease: true},
				StaleAfter: 30 * time.Second},
			{InstanceState: ports.InstanceState{HolderID: "node-b", Role: ports.RoleAPIOnly, Interval: 2 * time.Second,
				StartedAt: seen, LastSeenAt: seen, SeenAgo: 7 * time.Second}, StaleAfter: 6 * time.Second, Stale: true},
		},
		Lease: core.Lease{HolderID: "node-a", Epoch: 7, ExpiresAt: seen.Add(40 * time.Second)}, LeaseFound: true,
	}
	c := start(t, httpapi.Config{Instances: fleet{overview: o}})
	res, err := c.ListInstancesWithResponse(context.Background())
	if err != nil || res.JSON200 == nil {
		t.Fatalf("list: %v %s", err, res.Body)
	}
	got := res.JSON200
	if len(got.Instances) != 2 || got.Lease == nil || got.Lease.HolderId != "node-a" || got.Lease.LeaseEpoch != 7 ||
		!got.Lease.ExpiresAt.Equal(seen.Add(40*time.Second)) {
		t.Fatalf("list = %s", res.Body)
	}
	a, b := got.Instances[0], got.Instances[1]
	if a.HolderId != "node-a" || a.Version != "v1.4.0" || a.Role != "leader" || !a.HoldsLease || !a.LastSeenAt.Equal(seen) ||
		!a.StartedAt.Equal(seen.Add(-2*time.Minute)) || a.SecondsSinceSeen != 3.5 || a.HeartbeatIntervalSeconds != 10 ||
		a.StaleAfterSeconds != 30 || a.Stale {
		t.Fatalf("node-a = %+v", a)
	}
	if b.Role != "api-only" || b.Version != "" || !b.Stale || b.HoldsLease || b.StaleAfterSeconds != 6 {
		t.Fatalf("node-b = %+v", b)
	}
	// Nobody ever led: no lease in the answer.
	c = start(t, httpapi.Config{Instances: fleet{}})
	res, err = c.ListInstancesWithResponse(context.Background())
	if err != nil || res.JSON200 == nil || res.JSON200.Lease != nil || res.JSON200.Instances == nil || len(res.JSON200.Instances) != 0 {
		t.Fatalf("an empty fleet: %v %s", err, res.Body)
	}
}

func TestInstancesProblems(t *testing.T) {
	for _, c := range []struct {
		name     string
		cfg      httpapi.Config
		status   int
		typeName string
	}{
		{"without a directory", httpapi.Config{}, http.StatusNotImplemented, "not-available"},
		{"with the store down", httpapi.Config{Instances: fleet{err: fmt.Errorf("list: %w", core.ErrStoreUnavailable)}},
			http.StatusServiceUnavailable, "store-unavailable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := start(t, c.cfg).ListInstancesWithResponse(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, c.status, c.typeName)
		})
	}
}

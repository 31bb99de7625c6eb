package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

// instanceCases are the cases of ports.InstanceStore; Run runs them with
// the rest.
var instanceCases = []storeCase{
	{"InstancesBeatAndList", testInstancesBeat},
	{"InstancesHoldingTheLease", testInstancesLease},
	{"InstancesForgottenAndRemoved", testInstancesForget},
	{"InstancesRefuseBadBeats", testInstancesRefusals},
}

func instanceStore(t *testing.T, h Harness) ports.InstanceStore {
	t.Helper()
	is, ok := h.Store.(ports.InstanceStore)
	if !ok {
		t.Fatalf("%T does not implement ports.InstanceStore: every store must", h.Store)
	}
	return is
}

func beat(t *testing.T, is ports.InstanceStore, b ports.InstanceBeat) {
	t.Helper()
	if err := is.BeatInstance(context.Background(), b); err != nil {
		t.Fatalf("BeatInstance(%+v): %v", b, err)
	}
}

func listInstances(t *testing.T, is ports.InstanceStore) map[string]ports.InstanceState {
	t.Helper()
	got, err := is.ListInstances(context.Background(), core.DefaultLeaseName)
	if err != nil {
		t.Fatalf("ListInstances: %v", err)
	}
	out := make(map[string]ports.InstanceState, len(got))
	for i, s := range got {
		if i > 0 && got[i-1].HolderID >= s.HolderID {
			t.Fatalf("instances not ordered by holder id: %q before %q", got[i-1].HolderID, s.HolderID)
		}
		if s.SeenAgo < 0 || s.LastSeenAt.Before(s.StartedAt) || s.StartedAt.Location() != time.UTC || s.LastSeenAt.Location() != time.UTC {
			t.Fatalf("instance %+v: want UTC times, LastSeenAt not before StartedAt, SeenAgo not negative", s)
		}
		out[s.HolderID] = s
	}
	return out
}

func testInstancesBeat(t *testing.T, h Harness) {
	is := instanceStore(t, h)
	if got := listInstances(t, is); len(got) != 0 {
		t.Fatalf("instances of an empty store: %+v", got)
	}
	a := ports.InstanceBeat{HolderID: "node-a", Version: "v1.2.3", Role: ports.RoleFollower, Interval: 10 * time.Second, Starting: true}
	b := ports.InstanceBeat{HolderID: "node-b", Version: "", Role: ports.RoleAPIOnly, Interval: 2500 * time.Millisecond, Starting: true}
	beat(t, is, a)
	beat(t, is, b)
	got := listInstances(t, is)
	first := got["node-a"]
	if len(got) != 2 || first.Version != "v1.2.3" || first.Role != ports.RoleFollower || first.Interval != 10*time.Second ||
		first.StartedAt.IsZero() || !first.LastSeenAt.Equal(first.StartedAt) || first.HoldsLease {
		t.Fatalf("after two starting beats: %+v", got)
	}
	if s := got["node-b"]; s.Role != ports.RoleAPIOnly || s.Version != "" || s.Interval != 2500*time.Millisecond {
		t.Fatalf("node-b = %+v", s)
	}
	// A later beat moves LastSeenAt (in the store's time) and keeps
	// StartedAt; it may change the role and the version.
	leasetest.WaitUntil(t, h.Leases, first.LastSeenAt.Add(10*time.Millisecond))
	a.Starting, a.Role, a.Version = false, ports.RoleLeader, "v1.2.4"
	beat(t, is, a)
	again := listInstances(t, is)["node-a"]
	if !again.StartedAt.Equal(first.StartedAt) || !again.LastSeenAt.After(first.LastSeenAt) ||
		again.Role != ports.RoleLeader || again.Version != "v1.2.4" {
		t.Fatalf("after a later beat: %+v, was %+v", again, first)
	}
	// A process starting again under the same holder id starts anew.
	leasetest.WaitUntil(t, h.Leases, again.LastSeenAt.Add(10*time.Millisecond))
	a.Starting = true
	beat(t, is, a)
	restarted := listInstances(t, is)["node-a"]
	if !restarted.StartedAt.After(first.StartedAt) || !restarted.StartedAt.Equal(restarted.LastSeenAt) {
		t.Fatalf("after a starting beat: %+v, was %+v", restarted, again)
	}
	// SeenAgo is the store's time since the last beat.
	leasetest.WaitUntil(t, h.Leases, restarted.LastSeenAt.Add(300*time.Millisecond))
	if s := listInstances(t, is)["node-a"]; s.SeenAgo < 300*time.Millisecond || s.SeenAgo > leasetest.ExpiryWait+time.Minute {
		t.Fatalf("SeenAgo %v, want at least 300ms", s.SeenAgo)
	}
	if h.Restart != nil {
		h = h.Restart(t)
		if s := listInstances(t, instanceStore(t, h))["node-a"]; !s.StartedAt.Equal(restarted.StartedAt) || s.Version != "v1.2.4" {
			t.Fatalf("after a restart: %+v", s)
		}
	}
}

func testInstancesLease(t *testing.T, h Harness) {
	is := instanceStore(t, h)
	for _, id := range []string{"node-a", "node-b"} {
		beat(t, is, ports.InstanceBeat{HolderID: id, Role: ports.RoleFollower, Interval: time.Second, Starting: true})
	}
	lease := leasetest.MustAcquire(t, h.Leases, core.DefaultLeaseName, "node-b", leasetest.LongLease)
	got := listInstances(t, is)
	if got["node-a"].HoldsLease || !got["node-b"].HoldsLease {
		t.Fatalf("with node-b's lease unexpired: %+v", got)
	}
	// Another lease's holder holds nothing under this name.
	other, err := is.ListInstances(context.Background(), "another-lease")
	if err != nil || len(other) != 2 || other[0].HoldsLease || other[1].HoldsLease {
		t.Fatalf("listed under another lease name: %+v %v", other, err)
	}
	// A released lease is expired at once: held by nobody.
	if err := h.Leases.Release(context.Background(), lease.Fence()); err != nil {
		t.Fatalf("release: %v", err)
	}
	if got := listInstances(t, is); got["node-b"].HoldsLease {
		t.Fatalf("an expired lease is held by nobody: %+v", got["node-b"])
	}
}

func testInstancesForget(t *testing.T, h Harness) {
	is := instanceStore(t, h)
	ctx := context.Background()
	beat(t, is, ports.InstanceBeat{HolderID: "node-a", Role: ports.RoleFollower, Interval: time.Second, Starting: true})
	beat(t, is, ports.InstanceBeat{HolderID: "node-b", Role: ports.RoleFollower, Interval: time.Second, Starting: true})
	// quiet is long enough that node-a, beaten just before, is younger
	// than it when ForgetInstances runs, even on a slow machine.
	const quiet = 3 * time.Second
	leasetest.WaitUntil(t, h.Leases, listInstances(t, is)["node-b"].LastSeenAt.Add(quiet+time.Millisecond))
	beat(t, is, ports.InstanceBeat{HolderID: "node-a", Role: ports.RoleFollower, Interval: time.Second})
	if n, err := is.ForgetInstances(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("forget after an hour: %d %v, want none", n, err)
	}
	if n, err := is.ForgetInstances(ctx, quiet); err != nil || n != 1 {
		t.Fatalf("forget after %v: %d %v, want node-b", quiet, n, err)
	}
	if got := listInstances(t, is); len(got) != 1 || got["node-a"].HolderID == "" {
		t.Fatalf("after forgetting node-b: %+v", got)
	}
	if ok, err := is.RemoveInstance(ctx, "node-a"); err != nil || !ok {
		t.Fatalf("remove node-a: %v %v", ok, err)
	}
	if ok, err := is.RemoveInstance(ctx, "node-a"); err != nil || ok {
		t.Fatalf("remove node-a twice: %v %v, want false", ok, err)
	}
	if got := listInstances(t, is); len(got) != 0 {
		t.Fatalf("after removing every instance: %+v", got)
	}
}

func testInstancesRefusals(t *testing.T, h Harness) {
	is := instanceStore(t, h)
	ok := ports.InstanceBeat{HolderID: "node-a", Role: ports.RoleFollower, Interval: time.Second}
	for name, mutate := range map[string]func(b *ports.InstanceBeat){
		"no holder id":          func(b *ports.InstanceBeat) { b.HolderID = "" },
		"a long holder id":      func(b *ports.InstanceBeat) { b.HolderID = strings.Repeat("h", ports.MaxHolderIDLen+1) },
		"a long version":        func(b *ports.InstanceBeat) { b.Version = strings.Repeat("v", ports.MaxVersionLen+1) },
		"a non-ASCII holder id": func(b *ports.InstanceBeat) { b.HolderID = "nöde" },
		"a trailing space":      func(b *ports.InstanceBeat) { b.HolderID = "node-a " },
		"an unknown role":       func(b *ports.InstanceBeat) { b.Role = "boss" },
		"no interval":           func(b *ports.InstanceBeat) { b.Interval = 0 },
		"an interval too long":  func(b *ports.InstanceBeat) { b.Interval = 25 * time.Hour },
	} {
		b := ok
		mutate(&b)
		if err := is.BeatInstance(context.Background(), b); !errors.Is(err, ports.ErrInvalidBeat) {
			t.Errorf("%s: err = %v, want ErrInvalidBeat", name, err)
		}
	}
	if got := listInstances(t, is); len(got) != 0 {
		t.Fatalf("refused beats stored %+v", got)
	}
	// The longest holder id and version are kept whole.
	long := ports.InstanceBeat{HolderID: strings.Repeat("h", ports.MaxHolderIDLen), Version: strings.Repeat("v", ports.MaxVersionLen),
		Role: ports.RoleFollower, Interval: time.Second, Starting: true}
	beat(t, is, long)
	if s := listInstances(t, is)[long.HolderID]; s.Version != long.Version {
		t.Fatalf("the longest holder id and version: %+v", s)
	}
}

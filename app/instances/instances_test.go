package instances_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/instances"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

var t0 = time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)

// leadership is a LeadershipReporter a test flips.
type leadership struct{ leader atomic.Bool }

func (l *leadership) Leadership() (core.Lease, bool) { return core.Lease{}, l.leader.Load() }

// recordingStore records the beats it is asked to store and can refuse
// the first few.
type recordingStore struct {
	ports.InstanceStore
	mu     sync.Mutex
	beats  []ports.InstanceBeat
	refuse int
}

func (s *recordingStore) BeatInstance(ctx context.Context, b ports.InstanceBeat) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beats = append(s.beats, b)
	if s.refuse > 0 {
		s.refuse--
		return core.ErrStoreUnavailable
	}
	return s.InstanceStore.BeatInstance(ctx, b)
}

func (s *recordingStore) recorded() []ports.InstanceBeat {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ports.InstanceBeat(nil), s.beats...)
}

type fixture struct {
	clock *clocktest.Clock
	store *memstore.Store
	rec   *recordingStore
	lead  *leadership
}

func newFixture() *fixture {
	f := &fixture{clock: clocktest.New(t0), lead: &leadership{}}
	f.store = memstore.New(f.clock)
	f.rec = &recordingStore{InstanceStore: f.store}
	return f
}

// start runs a heartbeat until the test ends, and returns its stop, which
// waits for Run to return.
func (f *fixture) start(t *testing.T, cfg instances.HeartbeatConfig) (stop func()) {
	t.Helper()
	cfg.Store, cfg.Clock, cfg.Leadership = f.rec, f.clock, f.lead
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if cfg.HolderID == "" {
		cfg.HolderID = "node-a"
	}
	h, err := instances.NewHeartbeat(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.Run(ctx)
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// tick waits until the heartbeat waits for its next check at the clock's
// now plus a second, which it arms only after beating, then advances the
// clock to it.
func (f *fixture) tick(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.clock.WaitForTimer(ctx, f.clock.Now().Add(time.Second)); err != nil {
		t.Fatalf("the heartbeat did not wait for its next check: %v", err)
	}
	f.clock.Advance(time.Second)
}

// settle waits for the heartbeat to finish what the last tick started.
func (f *fixture) settle(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.clock.WaitForTimer(ctx, f.clock.Now().Add(time.Second)); err != nil {
		t.Fatalf("the heartbeat did not wait for its next check: %v", err)
	}
}

func (f *fixture) record(t *testing.T, holderID string) (ports.InstanceState, bool) {
	t.Helper()
	got, err := f.store.ListInstances(context.Background(), core.DefaultLeaseName)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		if s.HolderID == holderID {
			return s, true
		}
	}
	return ports.InstanceState{}, false
}

func TestHeartbeatRecordsRoleChangesAndIntervals(t *testing.T) {
	f := newFixture()
	stop := f.start(t, instances.HeartbeatConfig{Version: "v9", Interval: 5 * time.Second})
	f.settle(t)
	s, ok := f.record(t, "node-a")
	if !ok || s.Role != ports.RoleFollower || s.Version != "v9" || s.Interval != 5*time.Second || !s.StartedAt.Equal(t0) {
		t.Fatalf("after the first beat: %+v %v", s, ok)
	}
	// Leadership shows at the next check, not the next interval.
	f.lead.leader.Store(true)
	f.tick(t)
	f.settle(t)
	if s, _ := f.record(t, "node-a"); s.Role != ports.RoleLeader || !s.LastSeenAt.Equal(t0.Add(time.Second)) || !s.StartedAt.Equal(t0) {
		t.Fatalf("after becoming leader: %+v", s)
	}
	// Then it beats every interval: at 6s, not before.
	for range 4 {
		f.tick(t)
	}
	f.settle(t)
	if s, _ := f.record(t, "node-a"); !s.LastSeenAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("beat before its interval: %+v", s)
	}
	f.tick(t)
	f.settle(t)
	if s, _ := f.record(t, "node-a"); !s.LastSeenAt.Equal(t0.Add(6 * time.Second)) {
		t.Fatalf("no beat at the interval: %+v", s)
	}
	beats := f.rec.recorded()
	if len(beats) != 3 || !beats[0].Starting || beats[1].Starting || beats[2].Starting {
		t.Fatalf("beats %+v: want one starting beat, then two", beats)
	}
	// A graceful stop removes the record.
	stop()
	if s, ok := f.record(t, "node-a"); ok {
		t.Fatalf("after the stop: %+v", s)
	}
}

func TestHeartbeatRetriesARefusedFirstBeatAsStarting(t *testing.T) {
	f := newFixture()
	f.rec.refuse = 1
	f.start(t, instances.HeartbeatConfig{APIOnly: true})
	f.tick(t)
	f.settle(t)
	beats := f.rec.recorded()
	if len(beats) != 2 || !beats[1].Starting || beats[1].Role != ports.RoleAPIOnly {
		t.Fatalf("beats %+v: want the refused beat tried again as the starting one", beats)
	}
	if s, ok := f.record(t, "node-a"); !ok || s.Role != ports.RoleAPIOnly || !s.StartedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("record %+v %v", s, ok)
	}
}

func TestHeartbeatForgetsLongGoneInstances(t *testing.T) {
	f := newFixture()
	ctx := context.Background()
	if err := f.store.BeatInstance(ctx, ports.InstanceBeat{HolderID: "gone", Role: ports.RoleFollower, Interval: time.Second}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Hour + time.Second)
	f.start(t, instances.HeartbeatConfig{ForgetAfter: time.Hour})
	f.settle(t)
	if s, ok := f.record(t, "gone"); ok {
		t.Fatalf("a record not seen for over an hour is still there: %+v", s)
	}
}

func TestDirectoryJudgesStalenessByEachInterval(t *testing.T) {
	f := newFixture()
	ctx := context.Background()
	for _, b := range []ports.InstanceBeat{
		{HolderID: "fast", Role: ports.RoleFollower, Interval: time.Second},
		{HolderID: "slow", Role: ports.RoleLeader, Interval: 10 * time.Second},
	} {
		if err := f.store.BeatInstance(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, err := f.store.Acquire(ctx, ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "slow", Duration: time.Minute}); err != nil || !ok {
		t.Fatal(err)
	}
	d, err := instances.NewDirectory(f.store, f.store)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(3 * time.Second) // the fast one's three intervals: not yet stale
	o, err := d.Instances(ctx)
	if err != nil || len(o.Instances) != 2 || o.Instances[0].Stale || o.Instances[0].StaleAfter != 3*time.Second {
		t.Fatalf("at three intervals: %+v %v", o, err)
	}
	f.clock.Advance(time.Millisecond)
	o, err = d.Instances(ctx)
	if err != nil || !o.Instances[0].Stale || o.Instances[1].Stale || !o.Instances[1].HoldsLease || o.Instances[0].HoldsLease {
		t.Fatalf("past three of the fast one's intervals: %+v %v", o, err)
	}
	if !o.LeaseFound || o.Lease.HolderID != "slow" {
		t.Fatalf("lease %+v %v", o.Lease, o.LeaseFound)
	}
}

func TestConfigurationRefused(t *testing.T) {
	if _, err := instances.NewHeartbeat(instances.HeartbeatConfig{}); err == nil {
		t.Error("a heartbeat without a store was made")
	}
	f := newFixture()
	_, err := instances.NewHeartbeat(instances.HeartbeatConfig{Store: f.store, Clock: f.clock, HolderID: "bad holder "})
	if !errors.Is(err, ports.ErrInvalidBeat) {
		t.Errorf("a holder id the store cannot keep: %v", err)
	}
	if _, err := instances.NewDirectory(nil, f.store); err == nil {
		t.Error("a directory without a store was made")
	}
}

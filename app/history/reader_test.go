package history_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/history"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// t0 is 12:30:30 on a whole day: inside the 12:30 bucket of an hour by
// the minute.
var t0 = time.Date(2026, 2, 2, 12, 30, 30, 0, time.UTC)

var (
	alerts  = contract("alerts", "http://sms-a.test")
	billing = contract("billing", "http://sms-a.test")
	promo   = contract("promo", "http://push-b.test")
)

func contract(target, url string) core.Contract {
	return core.Contract{SubmissionTarget: target, GatewayType: core.GatewaySMS, GatewayURL: url,
		Mode: core.ModeRealtime, Policy: core.PolicyOneShot, TerminalOutcomes: []string{}}
}

// countingStore records the windows the reader asks the store for.
type countingStore struct {
	ports.HistoryStore
	mu    sync.Mutex
	reads []ports.HistoryParams
}

func (s *countingStore) History(ctx context.Context, p ports.HistoryParams) ([]ports.HistoryRow, error) {
	s.mu.Lock()
	s.reads = append(s.reads, p)
	s.mu.Unlock()
	return s.HistoryStore.History(ctx, p)
}

func (s *countingStore) last(t *testing.T) ports.HistoryParams {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reads) == 0 {
		t.Fatal("the store was not read")
	}
	return s.reads[len(s.reads)-1]
}

type fixture struct {
	clock *clocktest.Clock
	store *memstore.Store
	reads *countingStore
	r     *history.Reader
	// registry is what Targets returns; tests edit it.
	registry []core.Contract
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{clock: clocktest.New(t0), registry: []core.Contract{alerts, billing, promo}}
	f.store = memstore.New(f.clock)
	f.reads = &countingStore{HistoryStore: f.store}
	r, err := history.New(history.Config{Store: f.reads, Clock: f.clock, Targets: func() []core.Contract { return f.registry }})
	if err != nil {
		t.Fatal(err)
	}
	f.r = r
	return f
}

func (f *fixture) create(t *testing.T, id string, c core.Contract, at time.Time) {
	t.Helper()
	if _, err := f.store.CreateIntent(context.Background(), core.NewIntent(id, c, json.RawMessage(`{}`), at)); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) read(t *testing.T, w ports.HistoryWindow) ports.HistoryView {
	t.Helper()
	v, err := f.r.History(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func submitted(s ports.HistorySeries) []int64 {
	out := make([]int64, len(s.Counts))
	for i, c := range s.Counts {
		out[i] = c.Submitted
	}
	return out
}

func find(t *testing.T, series []ports.HistorySeries, name string) ports.HistorySeries {
	t.Helper()
	for _, s := range series {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no series %q in %+v", name, series)
	return ports.HistorySeries{}
}

func TestTheHourByTheMinuteGroupedByTargetAndGateway(t *testing.T) {
	f := newFixture(t)
	f.create(t, "a-1", alerts, t0)                       // the current bucket, 12:30
	f.create(t, "b-1", billing, t0.Add(-time.Minute))    // 12:29
	f.create(t, "p-1", promo, t0.Add(-59*time.Minute))   // 11:31, the first bucket
	f.create(t, "p-old", promo, t0.Add(-60*time.Minute)) // 11:30, before the window
	f.registry = []core.Contract{alerts, promo}          // billing left the registry
	v := f.read(t, ports.LastHour)

	if len(v.Starts) != 60 || !v.Starts[0].Equal(time.Date(2026, 2, 2, 11, 31, 0, 0, time.UTC)) ||
		!v.Starts[59].Equal(time.Date(2026, 2, 2, 12, 30, 0, 0, time.UTC)) || !v.Now.Equal(t0) {
		t.Fatalf("buckets %v..%v (%d), now %v", v.Starts[0], v.Starts[len(v.Starts)-1], len(v.Starts), v.Now)
	}
	want := make([]int64, 60)
	want[0], want[58], want[59] = 1, 1, 1
	if got := submitted(v.Total); !equal(got, want) {
		t.Fatalf("total submitted %v, want %v", got, want)
	}
	if got := submitted(find(t, v.Targets, "billing")); got[58] != 1 || sum(got) != 1 {
		t.Fatalf("billing %v", got)
	}
	// Every target of the registry has a series, also without counts.
	if len(v.Targets) != 3 || v.Targets[0].Name != "alerts" || v.Targets[2].Name != "promo" {
		t.Fatalf("targets %+v", v.Targets)
	}
	// Gateways follow the registry's routing; billing left it.
	if got := submitted(find(t, v.Gateways, "http://sms-a.test")); got[59] != 1 || sum(got) != 1 {
		t.Fatalf("sms-a %v", got)
	}
	if got := submitted(find(t, v.Gateways, ports.UnroutedGateway)); got[58] != 1 || sum(got) != 1 {
		t.Fatalf("unrouted %v", got)
	}
	if got := submitted(find(t, v.Gateways, "http://push-b.test")); got[0] != 1 || sum(got) != 1 {
		t.Fatalf("push-b %v", got)
	}
}

func TestSettledBucketsAreReadOnce(t *testing.T) {
	f := newFixture(t)
	f.create(t, "a-1", alerts, t0.Add(-10*time.Minute)) // 12:20, settled
	f.read(t, ports.LastHour)
	if p := f.reads.last(t); !p.From.Equal(time.Date(2026, 2, 2, 11, 31, 0, 0, time.UTC)) || p.Buckets != 60 {
		t.Fatalf("first read %+v, want the whole hour", p)
	}
	// A late write into a settled bucket is not read again; one into the
	// current bucket is.
	f.create(t, "late", alerts, t0.Add(-10*time.Minute))
	f.create(t, "now", alerts, t0)
	f.clock.Advance(time.Minute) // 12:31:30: the window moved by one bucket
	v := f.read(t, ports.LastHour)
	// The first read (12:30:30, two minutes to settle) kept the buckets
	// that ended by 12:28:30, up to 12:27: the second starts at 12:28.
	if p := f.reads.last(t); !p.From.Equal(time.Date(2026, 2, 2, 12, 28, 0, 0, time.UTC)) || p.Buckets != 4 {
		t.Fatalf("second read %+v, want 12:28 to 12:31", p)
	}
	got := submitted(v.Total)
	if got[48] != 1 || got[58] != 1 || sum(got) != 2 {
		t.Fatalf("total %v: want the settled 12:20 bucket as first read, and 12:30", got)
	}
	// Each window keeps its own buckets.
	if d := f.read(t, ports.LastDay); sum(submitted(d.Total)) != 3 {
		t.Fatalf("the day: %v", submitted(d.Total))
	}
}

func TestEndsAndErrorsReachTheSeries(t *testing.T) {
	f := newFixture(t)
	f.create(t, "a-1", alerts, t0)
	ctx := context.Background()
	lease, ok, err := f.store.Acquire(ctx, ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "l", Duration: time.Hour})
	if err != nil || !ok {
		t.Fatal(err)
	}
	if err := f.store.StartAttempt(ctx, ports.StartAttemptParams{Fence: lease.Fence(), IntentID: "a-1", Number: 1, StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := f.store.FinishAttempt(ctx, ports.FinishAttemptParams{Fence: lease.Fence(), IntentID: "a-1", Number: 1, FinishedAt: t0,
		Error: "timeout", Sent: true, Decision: core.Decision{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedOneShotCompleted}}); err != nil {
		t.Fatal(err)
	}
	v := f.read(t, ports.LastHour)
	last := v.Total.Counts[59]
	if last != (ports.HistoryCounts{Submitted: 1, Exhausted: 1, AttemptErrors: 1}) {
		t.Fatalf("the current bucket %+v", last)
	}
	if g := find(t, v.Gateways, "http://sms-a.test").Counts[59]; g != last {
		t.Fatalf("sms-a's current bucket %+v, want %+v", g, last)
	}
}

func TestRefusesWindowsItCannotCut(t *testing.T) {
	f := newFixture(t)
	for _, w := range []ports.HistoryWindow{
		{Span: time.Hour, Bucket: 7 * time.Minute},
		{Span: time.Hour, Bucket: 1500 * time.Millisecond},
		{Span: 2 * 24 * time.Hour, Bucket: time.Minute},
		{},
	} {
		if _, err := f.r.History(context.Background(), w); err == nil {
			t.Errorf("window %+v was cut", w)
		}
	}
	if _, err := history.New(history.Config{}); err == nil {
		t.Error("a reader without a store was made")
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sum(a []int64) (n int64) {
	for _, v := range a {
		n += v
	}
	return n
}

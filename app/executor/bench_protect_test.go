package executor_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/app/protection"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// BenchmarkProtectionOverhead runs the healthy path (every call accepted)
// with the gateway protection off and on (breaker with its defaults, plus a
// limit too generous to bind), so the two ns/op compare the cost of the
// breaker and limiter bookkeeping; the budget is 2 %.
func BenchmarkProtectionOverhead(b *testing.B) {
	breaker := core.DefaultBreakerConfig()
	for _, c := range []struct {
		name string
		p    protection.Config
	}{
		{"off", protection.Config{}},
		{"on", protection.Config{Breaker: &breaker, Limits: []protection.GatewayLimit{
			{GatewayType: core.GatewayPush, MaxInFlight: 1 << 20, Rate: 1e9, Burst: 1 << 20}}}},
	} {
		b.Run(c.name, func(b *testing.B) { drainBench(b, c.p, acceptAll{}, 1000) })
	}
}

// BenchmarkRateLimitHoldsTheRate drains 500 intents through a gateway limited
// to 250 calls/s (burst 1) on the wall clock and reports the rate the
// gateway saw; the issue asks for it within 5 % of the configured rate.
func BenchmarkRateLimitHoldsTheRate(b *testing.B) {
	const rate, n = 250.0, 500
	p := protection.Config{Limits: []protection.GatewayLimit{{GatewayType: core.GatewayPush, Rate: rate, Burst: 1}}}
	for b.Loop() {
		gw := &countingGateway{}
		store := memstore.New(wallClock{})
		now := time.Now()
		for i := range n {
			if _, err := store.CreateIntent(context.Background(), core.NewIntent(fmt.Sprintf("r-%04d", i), pushBatch, []byte(`{}`), now)); err != nil {
				b.Fatal(err)
			}
		}
		runLead(b, store, wallClock{}, p, gw, n)
		got := float64(n-1) / gw.last.Load().Sub(*gw.first.Load()).Seconds()
		b.ReportMetric(got, "calls/s")
		if off := (got - rate) / rate; off > 0.05 || off < -0.05 {
			b.Errorf("the gateway saw %.1f calls/s, configured %.0f: %.1f%% off", got, rate, 100*off)
		}
	}
}

// wallClock is ports.Clock on the time package, for the benchmarks that
// measure real time (the limiter's rate is calls per wall-clock second).
// It is the executor's tests' own: the production wall clock is an adapter
// (adapters/sysclock), which a test of an app room does not import.
type wallClock struct{}

func (wallClock) Now() time.Time                       { return time.Now() }
func (wallClock) NewTimer(d time.Duration) ports.Timer { return wallTimer{time.NewTimer(d)} }
func (wallClock) NewTimerAt(at time.Time) ports.Timer {
	return wallTimer{time.NewTimer(time.Until(at))}
}

type wallTimer struct{ t *time.Timer }

func (t wallTimer) C() <-chan time.Time { return t.t.C }
func (t wallTimer) Stop() bool          { return t.t.Stop() }

// countingGateway accepts everything and remembers its first and last call.
type countingGateway struct {
	first atomic.Pointer[time.Time]
	last  atomic.Pointer[time.Time]
}

func (g *countingGateway) Submit(context.Context, ports.SubmitParams) (core.Outcome, error) {
	now := time.Now()
	g.first.CompareAndSwap(nil, &now)
	g.last.Store(&now)
	return core.Outcome{Status: core.OutcomeAccepted}, nil
}

// drainBench is BenchmarkLeadDrainsPendingIntents with a protection.
func drainBench(b *testing.B, p protection.Config, gw ports.Gateway, batch int) {
	for b.Loop() {
		b.StopTimer()
		store := memstore.New(wallClock{})
		for i := range batch {
			if _, err := store.CreateIntent(context.Background(), core.NewIntent(fmt.Sprintf("i-%04d", i), pushBatch, []byte(`{}`), time.Now())); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		runLead(b, store, wallClock{}, p, gw, batch)
	}
	b.ReportMetric(float64(batch), "attempts/op")
}

// runLead leads until the n intents are terminal.
func runLead(b *testing.B, store *memstore.Store, clk ports.Clock, p protection.Config, gw ports.Gateway, n int) {
	b.Helper()
	lease, _, err := store.Acquire(context.Background(), ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "bench", Duration: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	eng, err := executor.New(executor.Config{
		Store: store, Clock: clk, MaxInFlight: 16, Logger: slog.New(slog.DiscardHandler), Protection: p,
		RefreshInterval: 10 * time.Millisecond,
		Gateways:        map[core.GatewayType]ports.Gateway{core.GatewayPush: gw},
	})
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, 0, n)
	page, _ := store.ListPending(context.Background(), ports.ListPendingParams{Limit: n})
	for _, r := range page {
		ids = append(ids, r.IntentID)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Lead(ctx, lease, func() bool { return true }) }()
	for _, id := range ids {
		if _, err := store.WaitIntent(context.Background(), id, func(in core.Intent) bool { return in.Status.Terminal() }); err != nil {
			b.Fatal(err)
		}
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

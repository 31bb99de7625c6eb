package executor_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// acceptAll is a gateway that accepts at once, so the benchmark measures
// the executor and the store, not a network.
type acceptAll struct{}

func (acceptAll) Submit(context.Context, ports.SubmitParams) (core.Outcome, error) {
	return core.Outcome{Status: core.OutcomeAccepted}, nil
}

// BenchmarkLeadDrainsPendingIntents measures rebuild, dispatch and the two
// fenced writes per attempt: each iteration a new leader finds 1000 due
// intents and runs each to ACCEPTED.
func BenchmarkLeadDrainsPendingIntents(b *testing.B) {
	const batch = 1000
	for b.Loop() {
		b.StopTimer()
		clk := clocktest.New(t0)
		store := memstore.New(clk)
		for i := range batch {
			if _, err := store.CreateIntent(context.Background(), core.NewIntent(fmt.Sprintf("i-%04d", i), pushBatch, []byte(`{}`), t0)); err != nil {
				b.Fatal(err)
			}
		}
		lease, _, err := store.Acquire(context.Background(), ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "bench", Duration: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		eng, err := executor.New(executor.Config{
			Store: store, Clock: clk, MaxInFlight: 16, Logger: slog.New(slog.DiscardHandler),
			Gateways: map[core.GatewayType]ports.Gateway{core.GatewayPush: acceptAll{}},
		})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		b.StartTimer()
		go func() { done <- eng.Lead(ctx, lease, func() bool { return true }) }()
		for i := range batch {
			id := fmt.Sprintf("i-%04d", i)
			if _, err := store.WaitIntent(context.Background(), id, func(in core.Intent) bool { return in.Status.Terminal() }); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(batch), "attempts/op")
}

package leader_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// gatedLeases holds every Acquire until the test opens gate.
type gatedLeases struct {
	faultyLeases
	gate chan struct{}
}

func (g *gatedLeases) Acquire(ctx context.Context, p ports.AcquireLeaseParams) (core.Lease, bool, error) {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return core.Lease{}, false, ctx.Err()
	}
	return g.faultyLeases.Acquire(ctx, p)
}

// TestTriedClosesOnceTheFirstAcquireReturns: serve waits on Tried before it
// warms the query pool, so it must stay open while the first acquire is
// under way and close once it returns, whether the instance then leads,
// follows another holder, or saw the store fail.
func TestTriedClosesOnceTheFirstAcquireReturns(t *testing.T) {
	for _, outcome := range []string{"leads", "follows", "store fails"} {
		t.Run(outcome, func(t *testing.T) {
			w := newWorld(t)
			if outcome == "follows" {
				if _, ok, err := w.store.Acquire(context.Background(), leaseParams("sm-other")); err != nil || !ok {
					t.Fatalf("the other instance's acquire: ok=%v err=%v", ok, err)
				}
			}
			leases := &gatedLeases{faultyLeases: faultyLeases{LeaseStore: w.store}, gate: make(chan struct{})}
			if outcome == "store fails" {
				leases.failAcquire(fmt.Errorf("%w: connection refused", core.ErrStoreUnavailable))
			}
			cfg := w.config("sm-01", 4*time.Second)
			cfg.Leases = leases
			e, x := w.start(cfg)
			select {
			case <-e.Tried():
				t.Fatal("Tried closed while the first acquire was still under way")
			case <-time.After(50 * time.Millisecond):
			}
			close(leases.gate)
			select {
			case <-e.Tried():
			case <-time.After(waitBound):
				t.Fatalf("Tried still open %s after the first acquire could return", waitBound)
			}
			_, leading := e.Leadership()
			if want := outcome == "leads"; leading != want {
				t.Fatalf("Leadership() = %v once Tried closed, want %v", leading, want)
			}
			if outcome == "leads" {
				x.next()
			}
		})
	}
}

package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// TestLeaseSurvivesASlowStoreUnderFullIntake floods a store whose writes are
// slow (3 ms each, so a full batch takes three quarters of a second) with
// far more intake writes than it can take, each giving up after a second as a
// request would and coming back 100 ms later, while a leader renews a 3 s
// lease every 300 ms. The lease must hold for the whole run at one epoch:
// its writes go ahead of the queue. Without the lease lane a renewal waits
// behind about six full batches and the lease lapses. Intake degrades instead: writes fail as the store
// unavailable (503 on the API). It needs real time for the database's lease
// clock, so -short skips it.
func TestLeaseSurvivesASlowStoreUnderFullIntake(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a few seconds of real-time load")
	}
	db := openTestDB(t)
	db.writer.onBatch = func(batch []*writeOp) { time.Sleep(time.Duration(len(batch)) * 3 * time.Millisecond) }
	ctx := t.Context()
	const (
		lease   = 3 * time.Second
		renewal = 300 * time.Millisecond
		run     = 5 * time.Second
		writers = 1500
	)
	l, ok, err := db.Leases().Acquire(ctx, ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "leader", Duration: lease})
	if err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}

	loadCtx, stopLoad := context.WithCancel(ctx)
	var (
		wg              sync.WaitGroup
		stored, refused atomic.Int64
		unexpected      atomic.Value
		contract        = core.Contract{SubmissionTarget: "t", GatewayType: core.GatewaySMS, Mode: core.ModeRealtime, Policy: core.PolicyOneShot, TerminalOutcomes: []string{}}
		seq             atomic.Int64
	)
	for range writers {
		wg.Go(func() {
			for loadCtx.Err() == nil {
				reqCtx, cancel := context.WithTimeout(loadCtx, time.Second)
				in := core.NewIntent(fmt.Sprintf("load-%d", seq.Add(1)), contract, []byte(`{}`), time.Now())
				_, err := db.Store().CreateIntent(reqCtx, in)
				cancel()
				switch {
				case err == nil:
					stored.Add(1)
				case errors.Is(err, core.ErrStoreUnavailable):
					refused.Add(1)
					select { // a client honouring Retry-After
					case <-loadCtx.Done():
					case <-time.After(100 * time.Millisecond):
					}
				default:
					unexpected.Store(err)
				}
			}
		})
	}

	deadline := time.Now().Add(run)
	renewals := 0
	for time.Now().Before(deadline) {
		time.Sleep(renewal)
		callCtx, cancel := context.WithDeadline(ctx, l.ExpiresAt)
		renewed, err := db.Leases().Renew(callCtx, ports.RenewLeaseParams{Fence: l.Fence(), Duration: lease})
		cancel()
		if err != nil {
			stopLoad()
			wg.Wait()
			t.Fatalf("renewal %d under load failed: %v (intake stored %d, refused %d)", renewals+1, err, stored.Load(), refused.Load())
		}
		if renewed.Epoch != l.Epoch {
			t.Fatalf("epoch moved from %d to %d", l.Epoch, renewed.Epoch)
		}
		l = renewed
		renewals++
	}
	stopLoad()
	wg.Wait()
	if err, _ := unexpected.Load().(error); err != nil {
		t.Fatalf("an intake write failed other than as unavailable: %v", err)
	}
	if refused.Load() == 0 {
		t.Fatalf("intake never degraded (stored %d): the load did not exceed the store", stored.Load())
	}
	t.Logf("%d renewals at epoch %d; intake stored %d, refused %d as unavailable", renewals, l.Epoch, stored.Load(), refused.Load())
}

// TestLeaseWriteGoesAheadOfQueuedWrites pins the order itself, with no
// timing: while a batch is held open and a full queue of intake writes
// waits behind it, a renewal is committed in the very next transaction,
// alone, before any queued write.
func TestLeaseWriteGoesAheadOfQueuedWrites(t *testing.T) {
	db := openTestDB(t)
	ctx := t.Context()
	l, _, err := db.Leases().Acquire(ctx, ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "leader", Duration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		batches [][]string
		held    = make(chan struct{})
		release = make(chan struct{})
	)
	db.writer.onBatch = func(batch []*writeOp) {
		names := make([]string, len(batch))
		for i, op := range batch {
			names[i] = op.name
		}
		mu.Lock()
		batches = append(batches, names)
		first := len(batches) == 1
		mu.Unlock()
		if first {
			close(held)
			<-release
		}
	}
	contract := core.Contract{SubmissionTarget: "t", GatewayType: core.GatewaySMS, Mode: core.ModeRealtime, Policy: core.PolicyOneShot, TerminalOutcomes: []string{}}
	create := func(id string) error {
		_, err := db.Store().CreateIntent(ctx, core.NewIntent(id, contract, []byte(`{}`), time.Now()))
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() { _ = create("first") })
	<-held
	queued := cap(db.writer.ops) + 50
	for i := range queued {
		wg.Go(func() { _ = create(fmt.Sprintf("queued-%d", i)) })
	}
	if !queueReached(cap(db.writer.ops), func() int { return len(db.writer.ops) }) {
		close(release)
		t.Fatalf("only %d of %d intake writes queued behind the held batch", len(db.writer.ops), cap(db.writer.ops))
	}
	renewed := make(chan error, 1)
	go func() {
		_, err := db.Leases().Renew(ctx, ports.RenewLeaseParams{Fence: l.Fence(), Duration: time.Hour})
		renewed <- err
	}()
	if !queueReached(1, func() int { return len(db.writer.leaseOps) }) {
		close(release)
		t.Fatal("the renewal was not handed to the lease lane")
	}
	close(release)
	if err := <-renewed; err != nil {
		t.Fatalf("renew: %v", err)
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(batches) < 3 || len(batches[1]) != 1 || batches[1][0] != "renew lease" {
		t.Fatalf("batches after the held one start %v, want the renewal alone first", batches[1:min(3, len(batches))])
	}
}

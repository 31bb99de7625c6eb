package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

// Renewal under load: how long the suite's leader holds its lease, how many
// fenced writers run against it, and how many renewals it makes.
const (
	renewalLease   = 3 * time.Second
	renewalWriters = 128
	rounds         = 4
)

// testRenewalUnderFencedWrites holds every store to the property the leader
// lives by: renewing the lease never waits behind fenced writes. In each
// round, 128 writers each make a fenced StartAttempt and FinishAttempt at
// once, and the holder renews its short lease again and again while their
// transactions are under way, each renewal bounded by half the lease. A
// renewal queued behind the writers' transactions would outlive its bound
// or let the lease run out: the renewal then fails, or a writer is fenced.
// However slow the machine makes a round, renewals that never wait keep the
// lease.
func testRenewalUnderFencedWrites(t *testing.T, h Harness) {
	ctx := t.Context()
	ids := make([]string, renewalWriters)
	for i := range ids {
		ids[i] = fmt.Sprintf("load-%03d", i)
		mustCreate(t, h.Store, newIntent(ids[i], smsContract("alerts"), `{}`, base))
	}
	// A first round under a long lease warms the store up (a remote
	// database's pool opens its connections) and is not judged.
	warm := leasetest.MustAcquire(t, h.Leases, core.DefaultLeaseName, "storetest-leader", leasetest.LongLease)
	if err := writeRound(ctx, h.Store, warm.Fence(), ids, 1); err != nil {
		t.Fatalf("warm-up round: %v", err)
	}
	if err := h.Leases.Release(ctx, warm.Fence()); err != nil {
		t.Fatal(err)
	}
	// A clock that moves with every statement passes two statements per
	// writer in every round, and one per renewal.
	d := renewalLease + 4*renewalWriters*h.StatementTime
	f := leasetest.MustAcquire(t, h.Leases, core.DefaultLeaseName, "storetest-leader", d).Fence()
	for round := 2; round <= rounds+1; round++ {
		done := make(chan error, 1)
		go func() { done <- writeRound(ctx, h.Store, f, ids, round) }()
		renewals, roundErr, renewErr := renewWhile(ctx, h, f, d, done)
		if renewErr != nil {
			t.Fatalf("renewal %d of round %d, under %d fenced writers: %v", renewals+1, round, renewalWriters, renewErr)
		}
		if roundErr != nil {
			t.Fatalf("round %d, after %d renewals: a fenced write failed while the lease should hold: %v", round, renewals, roundErr)
		}
	}
}

// renewWhile renews the lease for d, again and again, each renewal bounded
// by half the lease, until the round's writers report on done, and returns
// how many renewals it made, the round's error and the first renewal's
// error. On a store whose clock moves with every statement it stops
// renewing after renewalWriters renewals, so that its renewals cannot
// outrun the lease themselves, and waits for the round.
func renewWhile(ctx context.Context, h Harness, f core.Fence, d time.Duration, done <-chan error) (int, error, error) {
	n := 0
	for {
		select {
		case err := <-done:
			return n, err, nil
		default:
		}
		if h.StatementTime > 0 && n >= renewalWriters {
			return n, <-done, nil
		}
		rctx, cancel := context.WithTimeout(ctx, renewalLease/2)
		_, err := h.Leases.Renew(rctx, ports.RenewLeaseParams{Fence: f, Duration: d})
		cancel()
		if err != nil {
			return n, <-done, err
		}
		n++
	}
}

// writeRound makes attempt n of every intent at once, fenced by f, and
// returns the first error.
func writeRound(ctx context.Context, s ports.Store, f core.Fence, ids []string, n int) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(ids))
	for _, id := range ids {
		wg.Go(func() {
			if err := fencedRound(ctx, s, f, id, n); err != nil {
				errs <- fmt.Errorf("writer %s: %w", id, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// fencedRound starts attempt n of an intent and finishes it with a retry,
// both fenced by f.
func fencedRound(ctx context.Context, s ports.Store, f core.Fence, id string, n int) error {
	now := base.Add(time.Duration(n) * time.Second)
	if err := s.StartAttempt(ctx, ports.StartAttemptParams{Fence: f, IntentID: id, Number: n, StartedAt: now}); err != nil {
		return err
	}
	return s.FinishAttempt(ctx, ports.FinishAttemptParams{
		Fence: f, IntentID: id, Number: n, FinishedAt: now, Error: "gateway timeout", Sent: true,
		Decision: core.Decision{Status: core.StatusPending, NextDueAt: now.Add(time.Second)},
	})
}

// Package leasetest is the conformance suite of ports.LeaseStore. Every lease
// adapter runs it from its own tests, on its own real database:
//
//	func TestLeaseConformance(t *testing.T) {
//		leasetest.Run(t, func(t *testing.T) ports.LeaseStore {
//			return openFreshDatabase(t).Leases() // empty schema, closed by t.Cleanup
//		})
//	}
//
// newLeaseStore is called once per subtest and must return a lease store on
// an empty, migrated database that nothing else writes to. The suite checks
// the rules of the lease spec (leader-lease.md) through the port alone: the
// insert with epoch 1, takeover only after expiry, the epoch incremented on
// every acquire (also by the same holder), renew and release fenced by
// holder and epoch, exactly one winner among concurrent acquirers, and the
// database's time of the read on every lease answered (ReadAt).
//
// The suite never compares database time with the test's clock. Where it
// must wait for a lease to expire, it reads the database's clock through the
// port (DBNow acquires a private lease of zero duration, which a store must
// accept: it expires at once) and polls until that clock has passed the
// expiry, so it
// runs the same on a local SQLite file and on a remote SQL Server whose clock
// differs from the test machine's. Leases are short (ExpiryWait) and every
// wait is bounded.
package leasetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// ShortLease is the duration the suite gives leases it waits out: long enough
// to do a few statements before it expires, short enough to keep tests fast.
const ShortLease = 500 * time.Millisecond

// LongLease is the duration of leases that must not expire during a test.
const LongLease = time.Hour

// ExpiryWait bounds every wait for a lease to expire in database time.
const ExpiryWait = 10 * time.Second

// Run runs every lease case as a subtest, each on a fresh store.
func Run(t *testing.T, newLeaseStore func(t *testing.T) ports.LeaseStore) {
	t.Helper()
	cases := []struct {
		name string
		fn   func(t *testing.T, ls ports.LeaseStore)
	}{
		{"ReadMissing", testReadMissing},
		{"AcquireEmpty", testAcquireEmpty},
		{"SecondHolderRefused", testSecondHolderRefused},
		{"SameHolderRefusedWhileUnexpired", testSameHolderRefusedWhileUnexpired},
		{"TakeoverAfterExpiry", testTakeoverAfterExpiry},
		{"SameHolderReacquireIncrementsEpoch", testSameHolderReacquire},
		{"RenewByHolderAndEpochOnly", testRenewFenced},
		{"RenewAfterExpiryFenced", testRenewAfterExpiry},
		{"ReleaseLetsAnotherAcquire", testRelease},
		{"ReleaseFenced", testReleaseFenced},
		{"LeaseNamesIndependent", testLeaseNamesIndependent},
		{"ConcurrentAcquirersOneWins", testConcurrentAcquire},
		{"ConcurrentRenewAndTakeover", testRenewVersusTakeover},
		{"ReadAtIsTheDatabasesNow", testReadAt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.fn(t, newLeaseStore(t))
		})
	}
}

const leaseName = core.DefaultLeaseName

func testReadMissing(t *testing.T, ls ports.LeaseStore) {
	_, found, err := ls.Read(t.Context(), leaseName)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if found {
		t.Fatal("Read of a missing lease: found=true, want false")
	}
}

func testAcquireEmpty(t *testing.T, ls ports.LeaseStore) {
	const d = 90 * time.Second
	lease := MustAcquire(t, ls, leaseName, "holder-a", d)
	if lease.LeaseName != leaseName || lease.HolderID != "holder-a" || lease.Epoch != 1 {
		t.Fatalf("acquired %+v, want %s held by holder-a at epoch 1", lease, leaseName)
	}
	if lease.AcquiredAt.IsZero() || !lease.RenewedAt.Equal(lease.AcquiredAt) {
		t.Fatalf("acquired_at %v, renewed_at %v: want equal, non-zero", lease.AcquiredAt, lease.RenewedAt)
	}
	if got := lease.ExpiresAt.Sub(lease.AcquiredAt); got != d {
		t.Fatalf("expires_at - acquired_at = %v, want %v", got, d)
	}
	read, found, err := ls.Read(t.Context(), leaseName)
	if err != nil || !found {
		t.Fatalf("Read after acquire: found=%v err=%v", found, err)
	}
	assertSameLease(t, read, lease)
}

func testSecondHolderRefused(t *testing.T, ls ports.LeaseStore) {
	first := MustAcquire(t, ls, leaseName, "holder-a", LongLease)
	got, acquired, err := ls.Acquire(t.Context(), ports.AcquireLeaseParams{
		LeaseName: leaseName, HolderID: "holder-b", Duration: LongLease,
	})
	if err != nil {
		t.Fatalf("Acquire by holder-b: %v", err)
	}
	if acquired {
		t.Fatalf("holder-b acquired an unexpired lease held by holder-a: %+v", got)
	}
	assertSameLease(t, got, first)
	read, _, err := ls.Read(t.Context(), leaseName)
	if err != nil {
		t.Fatal(err)
	}
	assertSameLease(t, read, first)
}

func testSameHolderRefusedWhileUnexpired(t *testing.T, ls ports.LeaseStore) {
	first := MustAcquire(t, ls, leaseName, "holder-a", LongLease)
	got, acquired, err := ls.Acquire(t.Context(), ports.AcquireLeaseParams{
		LeaseName: leaseName, HolderID: "holder-a", Duration: LongLease,
	})
	if err != nil {
		t.Fatal(err)
	}
	if acquired {
		t.Fatalf("re-acquire of an unexpired lease succeeded: %+v (acquire must only take an expired lease)", got)
	}
	assertSameLease(t, got, first)
}

func testTakeoverAfterExpiry(t *testing.T, ls ports.LeaseStore) {
	first := MustAcquire(t, ls, leaseName, "holder-a", ShortLease)
	WaitExpired(t, ls, first)
	second := MustAcquire(t, ls, leaseName, "holder-b", LongLease)
	if second.HolderID != "holder-b" || second.Epoch != first.Epoch+1 {
		t.Fatalf("takeover gave %+v, want holder-b at epoch %d", second, first.Epoch+1)
	}
	if second.AcquiredAt.Before(first.ExpiresAt) {
		t.Fatalf("takeover at %v, before the old lease expired at %v", second.AcquiredAt, first.ExpiresAt)
	}
}

func testSameHolderReacquire(t *testing.T, ls ports.LeaseStore) {
	lease := MustAcquire(t, ls, leaseName, "holder-a", ShortLease)
	for want := int64(2); want <= 3; want++ {
		WaitExpired(t, ls, lease)
		lease = MustAcquire(t, ls, leaseName, "holder-a", ShortLease)
		if lease.HolderID != "holder-a" || lease.Epoch != want {
			t.Fatalf("same-holder re-acquire gave %+v, want epoch %d", lease, want)
		}
	}
}

func testRenewFenced(t *testing.T, ls ports.LeaseStore) {
	lease := MustAcquire(t, ls, leaseName, "holder-a", LongLease)
	for _, bad := range []core.Fence{
		{LeaseName: leaseName, HolderID: "holder-b", Epoch: lease.Epoch},
		{LeaseName: leaseName, HolderID: "holder-a", Epoch: lease.Epoch + 1},
		{LeaseName: leaseName, HolderID: "holder-a", Epoch: lease.Epoch - 1},
		{LeaseName: "another-lease", HolderID: "holder-a", Epoch: lease.Epoch},
	} {
		_, err := ls.Renew(t.Context(), ports.RenewLeaseParams{Fence: bad, Duration: LongLease})
		if !errors.Is(err, core.ErrFenced) {
			t.Errorf("Renew with fence %+v: err = %v, want core.ErrFenced", bad, err)
		}
	}
	read, _, err := ls.Read(t.Context(), leaseName)
	if err != nil {
		t.Fatal(err)
	}
	assertSameLease(t, read, lease)

	const d = 2 * time.Hour
	renewed, err := ls.Renew(t.Context(), ports.RenewLeaseParams{Fence: lease.Fence(), Duration: d})
	if err != nil {
		t.Fatalf("Renew by the holder: %v", err)
	}
	if renewed.HolderID != lease.HolderID || renewed.Epoch != lease.Epoch || !renewed.AcquiredAt.Equal(lease.AcquiredAt) {
		t.Fatalf("renew changed holder, epoch or acquired_at: %+v, was %+v", renewed, lease)
	}
	if renewed.RenewedAt.Before(lease.RenewedAt) {
		t.Fatalf("renewed_at went back: %v, was %v", renewed.RenewedAt, lease.RenewedAt)
	}
	if got := renewed.ExpiresAt.Sub(renewed.RenewedAt); got != d {
		t.Fatalf("renewed expires_at - renewed_at = %v, want %v", got, d)
	}
	read, _, err = ls.Read(t.Context(), leaseName)
	if err != nil {
		t.Fatal(err)
	}
	assertSameLease(t, read, renewed)
}

func testRenewAfterExpiry(t *testing.T, ls ports.LeaseStore) {
	lease := MustAcquire(t, ls, leaseName, "holder-a", ShortLease)
	WaitExpired(t, ls, lease)
	_, err := ls.Renew(t.Context(), ports.RenewLeaseParams{Fence: lease.Fence(), Duration: LongLease})
	if !errors.Is(err, core.ErrFenced) {
		t.Fatalf("Renew of an expired lease: err = %v, want core.ErrFenced", err)
	}
}

func testRelease(t *testing.T, ls ports.LeaseStore) {
	lease := MustAcquire(t, ls, leaseName, "holder-a", LongLease)
	if err := ls.Release(t.Context(), lease.Fence()); err != nil {
		t.Fatalf("Release by the holder: %v", err)
	}
	// No waiting: a released lease is expired at once in database time.
	next := MustAcquire(t, ls, leaseName, "holder-b", LongLease)
	if next.Epoch != lease.Epoch+1 {
		t.Fatalf("acquire after release: epoch %d, want %d", next.Epoch, lease.Epoch+1)
	}
	if _, err := ls.Renew(t.Context(), ports.RenewLeaseParams{Fence: lease.Fence(), Duration: LongLease}); !errors.Is(err, core.ErrFenced) {
		t.Fatalf("Renew of a released lease: err = %v, want core.ErrFenced", err)
	}
}

func testReleaseFenced(t *testing.T, ls ports.LeaseStore) {
	lease := MustAcquire(t, ls, leaseName, "holder-a", LongLease)
	for _, bad := range []core.Fence{
		{LeaseName: leaseName, HolderID: "holder-b", Epoch: lease.Epoch},
		{LeaseName: leaseName, HolderID: "holder-a", Epoch: lease.Epoch + 1},
	} {
		if err := ls.Release(t.Context(), bad); !errors.Is(err, core.ErrFenced) {
			t.Errorf("Release with fence %+v: err = %v, want core.ErrFenced", bad, err)
		}
	}
	if _, acquired, err := ls.Acquire(t.Context(), ports.AcquireLeaseParams{
		LeaseName: leaseName, HolderID: "holder-b", Duration: LongLease,
	}); err != nil || acquired {
		t.Fatalf("a refused release freed the lease: acquired=%v err=%v", acquired, err)
	}
	if err := ls.Release(t.Context(), lease.Fence()); err != nil {
		t.Fatal(err)
	}
	if err := ls.Release(t.Context(), lease.Fence()); !errors.Is(err, core.ErrFenced) {
		t.Fatalf("second Release of the same lease: err = %v, want core.ErrFenced", err)
	}
}

func testLeaseNamesIndependent(t *testing.T, ls ports.LeaseStore) {
	a := MustAcquire(t, ls, "lease-one", "holder-a", LongLease)
	b := MustAcquire(t, ls, "lease-two", "holder-b", LongLease)
	if a.Epoch != 1 || b.Epoch != 1 {
		t.Fatalf("epochs %d and %d, want 1 and 1", a.Epoch, b.Epoch)
	}
	if err := ls.Release(t.Context(), a.Fence()); err != nil {
		t.Fatal(err)
	}
	read, _, err := ls.Read(t.Context(), "lease-two")
	if err != nil {
		t.Fatal(err)
	}
	assertSameLease(t, read, b)
}

func testConcurrentAcquire(t *testing.T, ls ports.LeaseStore) {
	const n = 20
	type result struct {
		holder   string
		lease    core.Lease
		acquired bool
		err      error
	}
	results := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			holder := fmt.Sprintf("holder-%02d", i)
			<-start
			lease, acquired, err := ls.Acquire(context.Background(), ports.AcquireLeaseParams{
				LeaseName: leaseName, HolderID: holder, Duration: LongLease,
			})
			results[i] = result{holder, lease, acquired, err}
		})
	}
	close(start)
	wg.Wait()
	var winners []result
	for _, r := range results {
		if r.err != nil {
			t.Fatalf("Acquire by %s: %v", r.holder, r.err)
		}
		if r.acquired {
			winners = append(winners, r)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d of %d concurrent acquirers won, want exactly 1", len(winners), n)
	}
	win := winners[0]
	if win.lease.HolderID != win.holder || win.lease.Epoch != 1 {
		t.Fatalf("winner %s got %+v, want its own lease at epoch 1", win.holder, win.lease)
	}
	for _, r := range results {
		if !r.acquired && (r.lease.HolderID != win.holder || r.lease.Epoch != 1) {
			t.Errorf("loser %s was shown %+v, want the winner %s at epoch 1", r.holder, r.lease, win.holder)
		}
	}
}

// testRenewVersusTakeover races the holder's renew against other holders'
// acquire right at expiry: whatever the interleaving, the lease ends with
// exactly one holder, and a renew that succeeded was not overtaken by a
// takeover of the same epoch.
func testRenewVersusTakeover(t *testing.T, ls ports.LeaseStore) {
	lease := MustAcquire(t, ls, leaseName, "holder-a", ShortLease)
	WaitUntil(t, ls, lease.ExpiresAt.Add(-50*time.Millisecond))
	var (
		wg       sync.WaitGroup
		renewErr error
		renewed  core.Lease
		takers   [5]bool
	)
	wg.Go(func() {
		renewed, renewErr = ls.Renew(context.Background(), ports.RenewLeaseParams{Fence: lease.Fence(), Duration: LongLease})
	})
	for i := range takers {
		wg.Go(func() {
			deadline := time.Now().Add(2 * ExpiryWait)
			for time.Now().Before(deadline) {
				_, ok, err := ls.Acquire(context.Background(), ports.AcquireLeaseParams{
					LeaseName: leaseName, HolderID: fmt.Sprintf("taker-%d", i), Duration: LongLease,
				})
				if err != nil || ok {
					takers[i] = ok
					return
				}
				cur, _, err := ls.Read(context.Background(), leaseName)
				if err != nil || cur.Epoch != lease.Epoch || cur.HolderID != lease.HolderID || cur.ExpiresAt.After(lease.ExpiresAt) {
					return // somebody renewed or took over: the race is decided
				}
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	won := 0
	for _, ok := range takers {
		if ok {
			won++
		}
	}
	final, _, err := ls.Read(t.Context(), leaseName)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case renewErr == nil && won == 0:
		assertSameLease(t, final, renewed)
	case errors.Is(renewErr, core.ErrFenced) && won == 1:
		if final.Epoch != lease.Epoch+1 {
			t.Fatalf("after a takeover the epoch is %d, want %d", final.Epoch, lease.Epoch+1)
		}
	default:
		t.Fatalf("renew err = %v and %d takeovers; want exactly one of them to win", renewErr, won)
	}
}

// MustAcquire acquires the lease or fails the test.
func MustAcquire(t testing.TB, ls ports.LeaseStore, name, holder string, d time.Duration) core.Lease {
	t.Helper()
	lease, acquired, err := ls.Acquire(context.Background(), ports.AcquireLeaseParams{LeaseName: name, HolderID: holder, Duration: d})
	if err != nil {
		t.Fatalf("Acquire(%s, %s): %v", name, holder, err)
	}
	if !acquired {
		t.Fatalf("Acquire(%s, %s) refused; held by %+v", name, holder, lease)
	}
	return lease
}

// DBNow reads the database's clock through the port: it acquires a private
// lease of zero duration, whose acquired_at is the database's now and which
// is expired again at once, so the next call can take it.
func DBNow(t testing.TB, ls ports.LeaseStore) time.Time {
	t.Helper()
	lease, acquired, err := ls.Acquire(context.Background(), ports.AcquireLeaseParams{
		LeaseName: "leasetest-clock", HolderID: "leasetest-clock", Duration: 0,
	})
	if err != nil {
		t.Fatalf("reading the database clock: %v", err)
	}
	if !acquired {
		t.Fatalf("reading the database clock: the zero-duration clock lease was not re-acquirable: %+v", lease)
	}
	return lease.AcquiredAt
}

// WaitUntil polls the database clock until it reaches at, failing the test
// after ExpiryWait.
func WaitUntil(t testing.TB, ls ports.LeaseStore, at time.Time) {
	t.Helper()
	deadline := time.Now().Add(ExpiryWait)
	for {
		now := DBNow(t, ls)
		if !now.Before(at) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("database clock still at %v after %v, waiting for %v", now, ExpiryWait, at)
		}
		time.Sleep(min(at.Sub(now), 20*time.Millisecond))
	}
}

// WaitExpired waits until the lease has expired in database time.
func WaitExpired(t testing.TB, ls ports.LeaseStore, lease core.Lease) {
	t.Helper()
	WaitUntil(t, ls, lease.ExpiresAt)
}

func assertSameLease(t testing.TB, got, want core.Lease) {
	t.Helper()
	if got.LeaseName != want.LeaseName || got.HolderID != want.HolderID || got.Epoch != want.Epoch ||
		!got.AcquiredAt.Equal(want.AcquiredAt) || !got.RenewedAt.Equal(want.RenewedAt) || !got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Fatalf("lease %+v, want %+v", got, want)
	}
}

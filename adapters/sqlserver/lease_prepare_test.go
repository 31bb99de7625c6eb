package sqlserver

import (
	"context"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

// TestPrepareTakeoverWritesNothingAndWaitsForNobody: the rehearsal of a
// takeover leaves the lease row as it was, creates no row, and neither
// waits for a transaction that holds the executor's lease lock for a
// takeover (as a takeover in progress does) nor makes a takeover wait after it.
func TestPrepareTakeoverWritesNothingAndWaitsForNobody(t *testing.T) {
	db, _ := countedDB(t, Config{LeaseLockTimeout: 500 * time.Millisecond})
	ls := db.Leases()
	ctx := context.Background()
	held := leasetest.MustAcquire(t, ls, core.DefaultLeaseName, "holder-a", leasetest.LongLease)

	tx := holdLeaseLock(t, db, takeoverLeaseLockSQL)
	if err := ls.(ports.TakeoverPreparer).PrepareTakeover(ctx, core.DefaultLeaseName); err != nil {
		t.Fatalf("PrepareTakeover while a takeover holds the lease lock: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}

	got, found, err := ls.Read(ctx, core.DefaultLeaseName)
	if err != nil || !found {
		t.Fatalf("Read: found=%v err=%v", found, err)
	}
	if got.HolderID != held.HolderID || got.Epoch != held.Epoch || !got.RenewedAt.Equal(held.RenewedAt) || !got.ExpiresAt.Equal(held.ExpiresAt) {
		t.Fatalf("after the rehearsal the lease is %+v, want %+v unchanged", got, held)
	}
	if _, found, err := ls.Read(ctx, rehearsalLeaseName); err != nil || found {
		t.Fatalf("the rehearsal's lease name has a row: found=%v err=%v", found, err)
	}
	// The rehearsal's transaction ended: a takeover's lock is granted.
	if err := ls.Release(ctx, held.Fence()); err != nil {
		t.Fatal(err)
	}
	next := leasetest.MustAcquire(t, ls, core.DefaultLeaseName, "holder-b", leasetest.LongLease)
	if next.Epoch != held.Epoch+1 {
		t.Fatalf("takeover after the rehearsal at epoch %d, want %d", next.Epoch, held.Epoch+1)
	}
}

// TestFollowerRehearsesTheTakeoverAhead: a follower's acquire that finds
// the lease held by another instance with more than half its duration left
// also rehearses the takeover on its lease connection, once per warm-up
// period, so that the connection a takeover runs on after a crash has run
// the takeover's statements before; an acquire that finds the lease nearer
// its expiry rehearses nothing (the elector rehearses there itself).
func TestFollowerRehearsesTheTakeoverAhead(t *testing.T) {
	db, rc := countedDB(t, Config{})
	ctx := t.Context()
	name := uniqueLeaseName(t, "ahead-")
	leasetest.MustAcquire(t, db.Leases(), name, "leader", time.Minute)
	calls := func(duration time.Duration) int {
		t.Helper()
		before := rc.snapshot(poolLeases)
		if _, ok, err := db.Leases().Acquire(ctx, ports.AcquireLeaseParams{LeaseName: name, HolderID: "follower", Duration: duration}); err != nil || ok {
			t.Fatalf("a follower's acquire of a held lease: acquired=%v err=%v", ok, err)
		}
		n := 0
		for _, q := range rc.since(poolLeases, before).Queries {
			if q == acquireLeaseSQL {
				n++
			}
		}
		return n
	}
	// A minute left of a lease the follower would take for an hour: less
	// than half, so only the acquire itself.
	if n := calls(time.Hour); n != 1 {
		t.Fatalf("an acquire of a lease with less than half its duration left called the procedure %d times, want 1 (no rehearsal)", n)
	}
	if n := calls(time.Minute); n != 2 {
		t.Fatalf("a follower's first acquire of a held lease called the procedure %d times, want 2 (the acquire and a rehearsal)", n)
	}
	if n := calls(time.Minute); n != 1 {
		t.Fatalf("an acquire within the warm-up period called the procedure %d times, want 1", n)
	}
	if _, found, err := db.Leases().Read(ctx, rehearsalLeaseName); err != nil || found {
		t.Fatalf("the rehearsal's lease name has a row: found=%v err=%v", found, err)
	}
}

package leasetest

import (
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// testReadAt checks that every lease the store answers says when, in
// database time, the store read it: between two readings of the database's
// clock taken around the call. A follower sleeps ExpiresAt - ReadAt on its
// own clock to try again the moment the lease it was shown expires, so a
// ReadAt that came from anywhere but the database's clock at the read
// (the caller's clock, a stored column, zero) would wake it early or late.
func testReadAt(t *testing.T, ls ports.LeaseStore) {
	within := func(what string, call func() core.Lease) core.Lease {
		t.Helper()
		before := DBNow(t, ls)
		l := call()
		after := DBNow(t, ls)
		if l.ReadAt.Before(before) || l.ReadAt.After(after) {
			t.Fatalf("%s: ReadAt %v, want the database's time during the call, within [%v, %v]", what, l.ReadAt, before, after)
		}
		return l
	}
	held := within("Acquire that took the lease", func() core.Lease {
		return MustAcquire(t, ls, leaseName, "holder-a", LongLease)
	})
	if held.ReadAt.Before(held.AcquiredAt) || !held.ExpiresAt.After(held.ReadAt) {
		t.Fatalf("acquired %+v: want AcquiredAt <= ReadAt < ExpiresAt", held)
	}
	shown := within("Acquire refused", func() core.Lease {
		l, acquired, err := ls.Acquire(t.Context(), ports.AcquireLeaseParams{LeaseName: leaseName, HolderID: "holder-b", Duration: LongLease})
		if err != nil || acquired {
			t.Fatalf("Acquire by holder-b of a held lease: acquired=%v err=%v", acquired, err)
		}
		return l
	})
	assertSameLease(t, shown, held)
	if left := shown.ExpiresAt.Sub(shown.ReadAt); left <= 0 || left > LongLease {
		t.Fatalf("a refused acquire shows the lease with %v left (ExpiresAt - ReadAt), want within (0, %v]", left, LongLease)
	}
	within("Read", func() core.Lease {
		l, found, err := ls.Read(t.Context(), leaseName)
		if err != nil || !found {
			t.Fatalf("Read: found=%v err=%v", found, err)
		}
		return l
	})
	renewed := within("Renew", func() core.Lease {
		l, err := ls.Renew(t.Context(), ports.RenewLeaseParams{Fence: held.Fence(), Duration: time.Minute})
		if err != nil {
			t.Fatalf("Renew: %v", err)
		}
		return l
	})
	if got := renewed.ExpiresAt.Sub(renewed.ReadAt); got > time.Minute || got <= 0 {
		t.Fatalf("renewed for a minute, the lease has %v left at its ReadAt, want within (0, 1m]", got)
	}
}

package storetest

import (
	"testing"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

// assertFenced tries both execution writes with the fence f against an
// intent whose attempt 1 is open and attempt 2 not yet started, and checks
// that each is refused with core.ErrFenced (also where the intent would
// refuse it too) and writes nothing.
func assertFenced(t *testing.T, h Harness, f core.Fence, id string) {
	t.Helper()
	before := mustGet(t, h.Store, id)
	err := h.Store.FinishAttempt(t.Context(), accept(f, id, 1, at(50)))
	wantErr(t, "fenced FinishAttempt", err, core.ErrFenced)
	err = h.Store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: f, IntentID: id, Number: 2, StartedAt: at(51)})
	wantErr(t, "fenced StartAttempt", err, core.ErrFenced)
	// The fence is checked first: a stale leader learns it lost the lease
	// even when the intent would have refused the write anyway.
	err = h.Store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: f, IntentID: id, Number: 7, StartedAt: at(52)})
	wantErr(t, "fenced StartAttempt with a wrong number", err, core.ErrFenced)
	assertUnchanged(t, h.Store, before)
	if a, _ := mustGet(t, h.Store, id).LastAttempt(); a.Finished() {
		t.Fatal("a fenced FinishAttempt closed the attempt")
	}
}

// openAttempt creates an intent and starts its attempt 1 under f.
func openAttempt(t *testing.T, h Harness, f core.Fence, id string) {
	t.Helper()
	mustCreate(t, h.Store, newIntent(id, smsContract("alerts"), `{}`, base))
	start(t, h.Store, f, id, 1, at(1))
}

func testFencedNoLease(t *testing.T, h Harness) {
	f := leader(t, h)
	openAttempt(t, h, f, "intent-1")
	missing := core.Fence{LeaseName: "no-such-lease", HolderID: f.HolderID, Epoch: f.Epoch}
	assertFenced(t, h, missing, "intent-1")
}

func testFencedOtherHolder(t *testing.T, h Harness) {
	f := leader(t, h)
	openAttempt(t, h, f, "intent-1")
	assertFenced(t, h, core.Fence{LeaseName: f.LeaseName, HolderID: "someone-else", Epoch: f.Epoch}, "intent-1")
}

func testFencedStaleEpoch(t *testing.T, h Harness) {
	// The old epoch ends by a release (its lease expires at once), so the
	// attempt is started while the lease surely holds, however slow the
	// database: a short lease could expire before the first write.
	old := leasetest.MustAcquire(t, h.Leases, core.DefaultLeaseName, "storetest-leader", leasetest.LongLease)
	openAttempt(t, h, old.Fence(), "intent-1")
	if err := h.Leases.Release(t.Context(), old.Fence()); err != nil {
		t.Fatalf("release: %v", err)
	}
	// The same holder comes back: only the epoch tells the old writes apart.
	current := leasetest.MustAcquire(t, h.Leases, core.DefaultLeaseName, "storetest-leader", leasetest.LongLease)
	if current.Epoch != old.Epoch+1 {
		t.Fatalf("re-acquired at epoch %d, want %d", current.Epoch, old.Epoch+1)
	}
	assertFenced(t, h, old.Fence(), "intent-1")
	// The current epoch may go on where the old one stopped.
	finish(t, h.Store, accept(current.Fence(), "intent-1", 1, at(60)))
}

func testFencedExpired(t *testing.T, h Harness) {
	// The attempt is opened under a long lease of the first epoch; the
	// second epoch's short lease is then left to expire on the database's
	// clock, and nobody takes over.
	first := leasetest.MustAcquire(t, h.Leases, core.DefaultLeaseName, "storetest-leader", leasetest.LongLease)
	openAttempt(t, h, first.Fence(), "intent-1")
	if err := h.Leases.Release(t.Context(), first.Fence()); err != nil {
		t.Fatalf("release: %v", err)
	}
	lease := leasetest.MustAcquire(t, h.Leases, core.DefaultLeaseName, "storetest-leader", leasetest.ShortLease)
	leasetest.WaitExpired(t, h.Leases, lease)
	// An expired lease fences as surely as a lost one.
	assertFenced(t, h, lease.Fence(), "intent-1")
}

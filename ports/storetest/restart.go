package storetest

import (
	"slices"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

func testRestart(t *testing.T, h Harness) {
	f := leader(t, h)
	mustCreate(t, h.Store, newIntent("pending", smsContract("alerts"), `{"p":1}`, base))
	mustCreate(t, h.Store, newIntent("accepted", pushContract("news"), `{"a":1}`, at(1)))
	mustCreate(t, h.Store, newIntent("in-flight", smsContract("alerts"), `{"f":1}`, at(2)))
	complete(t, h.Store, retryAfter(f, "pending", 1, at(10), at(5010)))
	complete(t, h.Store, accept(f, "accepted", 1, at(11)))
	start(t, h.Store, f, "in-flight", 1, at(12))
	before := map[string]core.Intent{}
	for _, id := range []string{"pending", "accepted", "in-flight"} {
		before[id] = mustGet(t, h.Store, id)
	}
	cursor, err := h.Store.LatestChange(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	lease, _, err := h.Leases.Read(t.Context(), f.LeaseName)
	if err != nil {
		t.Fatal(err)
	}

	h = h.Restart(t)

	for id, want := range before {
		assertIntent(t, mustGet(t, h.Store, id), want)
	}
	// Idempotency survives: a taken id returns the stored intent, whatever
	// the new submission says.
	res, err := h.Store.CreateIntent(t.Context(), newIntent("accepted", pushContract("news"), `{"a":1}`, at(99)))
	if err != nil || res.Created {
		t.Fatalf("repeat after restart: created=%v err=%v", res.Created, err)
	}
	assertIntent(t, res.Intent, before["accepted"])
	res, err = h.Store.CreateIntent(t.Context(), newIntent("accepted", pushContract("news"), `{"a":2}`, at(99)))
	if err != nil || res.Created || res.Intent.Status != core.StatusAccepted || string(res.Intent.Payload) != `{"a":1}` {
		t.Fatalf("taken id after restart: created=%v status=%q payload=%s err=%v, want the stored accepted intent",
			res.Created, res.Intent.Status, res.Intent.Payload, err)
	}
	// The rebuild and the refresh cursor see the same state as before.
	pending, err := h.Store.ListPending(t.Context(), ports.ListPendingParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := rowIDs(pending); !slices.Equal(got, []string{"in-flight", "pending"}) {
		t.Fatalf("pending after restart: %v, want [in-flight pending]", got)
	}
	if latest, err := h.Store.LatestChange(t.Context()); err != nil || latest.IntentID != cursor.IntentID || !latest.LastModifiedAt.Equal(cursor.LastModifiedAt) {
		t.Fatalf("LatestChange after restart = %+v (err %v), want %+v", latest, err, cursor)
	}
	// The lease survives too: its holder still writes, fenced as before,
	// and the cursor taken before the restart sees the write.
	if got, found, err := h.Leases.Read(t.Context(), f.LeaseName); err != nil || !found || got.Epoch != lease.Epoch || !got.ExpiresAt.Equal(lease.ExpiresAt) {
		t.Fatalf("lease after restart: %+v found=%v err=%v, want %+v", got, found, err, lease)
	}
	finish(t, h.Store, accept(f, "in-flight", 1, at(20)))
	rows, _ := readChanges(t, h.Store, cursor, 10)
	if got := rowIDs(rows); !slices.Equal(got, []string{"in-flight"}) {
		t.Fatalf("changes after the pre-restart cursor: %v, want [in-flight]", got)
	}
	// New intents and later changes keep sorting after the old ones.
	mustCreate(t, h.Store, newIntent("new", smsContract("alerts"), `{}`, at(30)))
	all, _ := readChanges(t, h.Store, ports.ChangeCursor{}, 3)
	assertCursorOrder(t, all)
	if n := len(all); n != 4 {
		t.Fatalf("%d changes in total after restart, want 4", n)
	}
}

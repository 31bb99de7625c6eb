package storetest

import (
	"fmt"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
)

// testCreateIntentsMixed holds CreateIntents to CreateIntent's semantics
// for every item of one call: new intentIds are inserted, taken ones
// (before the call, including by a terminal intent, or earlier in the same
// call) return the stored intent unjudged, in the order of the call.
func testCreateIntentsMixed(t *testing.T, h Harness) {
	f := leader(t, h)
	taken := mustCreate(t, h.Store, newIntent("taken", smsContract("alerts"), `{"to":"+100"}`, base))
	mustCreate(t, h.Store, newIntent("done", smsContract("alerts"), `{"a":1}`, base))
	complete(t, h.Store, accept(f, "done", 1, at(10)))
	batch := []core.Intent{
		newIntent("new-a", smsContract("alerts"), `{"to":"+1"}`, at(20)),
		newIntent("taken", smsContract("other"), `{"to":"+200"}`, at(20)),
		newIntent("new-b", pushContract("news"), `[1,2,3]`, at(20)).WithNotBefore(at(900)),
		newIntent("new-a", smsContract("alerts"), `{"to":"+2"}`, at(20)),
		newIntent("done", smsContract("alerts"), `{"a":2}`, at(20)),
	}
	res, err := h.Store.CreateIntents(t.Context(), batch)
	if err != nil {
		t.Fatalf("CreateIntents: %v", err)
	}
	if len(res) != len(batch) {
		t.Fatalf("CreateIntents returned %d results for %d intents", len(res), len(batch))
	}
	for i, r := range res {
		if r.Refused != nil {
			t.Fatalf("item %d (%s) refused: %v", i, batch[i].IntentID, r.Refused)
		}
	}
	wantCreated := []bool{true, false, true, false, false}
	for i, r := range res {
		if r.Created != wantCreated[i] {
			t.Errorf("item %d (%s): Created=%v, want %v", i, batch[i].IntentID, r.Created, wantCreated[i])
		}
	}
	for _, i := range []int{0, 2} {
		if res[i].Intent.LastModifiedAt.IsZero() {
			t.Errorf("created intent %s has no LastModifiedAt", batch[i].IntentID)
		}
		want := batch[i]
		want.LastModifiedAt = res[i].Intent.LastModifiedAt
		assertIntent(t, res[i].Intent, want)
		assertIntent(t, mustGet(t, h.Store, batch[i].IntentID), want)
	}
	assertIntent(t, res[1].Intent, taken)
	// The second "new-a" repeats the first, as stored by this call.
	assertIntent(t, res[3].Intent, res[0].Intent)
	if got := res[4].Intent; got.Status != core.StatusAccepted || len(got.Attempts) != 1 || string(got.Payload) != `{"a":1}` {
		t.Errorf("taken terminal intent came back with status %q, %d attempts, payload %s; want the stored accepted intent",
			got.Status, len(got.Attempts), got.Payload)
	}
	assertUnchanged(t, h.Store, taken)
}

// testCreateIntentsRepeatWritesNothing: a call whose every intentId is
// taken changes nothing, not even a change marker.
func testCreateIntentsRepeatWritesNothing(t *testing.T, h Harness) {
	first, err := h.Store.CreateIntents(t.Context(), []core.Intent{
		newIntent("intent-1", smsContract("alerts"), `{"to":"+1"}`, base),
		newIntent("intent-2", smsContract("alerts"), `{"to":"+2"}`, base),
	})
	if err != nil || len(first) != 2 || !first[0].Created || !first[1].Created {
		t.Fatalf("first call: %+v, %v; want both created", first, err)
	}
	before, err := h.Store.LatestChange(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.Store.CreateIntents(t.Context(), []core.Intent{
		newIntent("intent-2", smsContract("alerts"), `{"to":"+2"}`, at(5)),
		newIntent("intent-1", smsContract("alerts"), `{"to":"+1"}`, at(5)),
	})
	if err != nil || len(again) != 2 || again[0].Created || again[1].Created {
		t.Fatalf("repeat call: %+v, %v; want both found", again, err)
	}
	assertIntent(t, again[0].Intent, first[1].Intent)
	assertIntent(t, again[1].Intent, first[0].Intent)
	after, err := h.Store.LatestChange(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("a call of repeats moved the latest change from %+v to %+v", before, after)
	}
	restarted := h.Restart(t)
	for _, r := range first {
		assertIntent(t, mustGet(t, restarted.Store, r.Intent.IntentID), r.Intent)
	}
}

// testCreateIntentsLarge: a call of many intents, some taken, stores every
// new one and answers each in order, whatever statements the store splits
// it into.
func testCreateIntentsLarge(t *testing.T, h Harness) {
	const n = 301
	var batch []core.Intent
	for i := range n {
		id := fmt.Sprintf("intent-%03d", i)
		if i%50 == 7 {
			mustCreate(t, h.Store, newIntent(id, smsContract("alerts"), `{"taken":true}`, base))
		}
		batch = append(batch, newIntent(id, smsContract("alerts"), fmt.Sprintf(`{"n":%d}`, i), at(1)))
	}
	res, err := h.Store.CreateIntents(t.Context(), batch)
	if err != nil {
		t.Fatalf("CreateIntents of %d: %v", n, err)
	}
	if len(res) != n {
		t.Fatalf("%d results for %d intents", len(res), n)
	}
	for i, r := range res {
		taken := i%50 == 7
		want := fmt.Sprintf(`{"n":%d}`, i)
		if taken {
			want = `{"taken":true}`
		}
		if r.Created == taken || r.Intent.IntentID != batch[i].IntentID || string(r.Intent.Payload) != want {
			t.Fatalf("item %d: created=%v id %q payload %s; want created=%v, %q, %s",
				i, r.Created, r.Intent.IntentID, r.Intent.Payload, !taken, batch[i].IntentID, want)
		}
		if got := mustGet(t, h.Store, batch[i].IntentID); string(got.Payload) != want {
			t.Fatalf("stored %s has payload %s, want %s", got.IntentID, got.Payload, want)
		}
	}
}

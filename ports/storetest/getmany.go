package storetest

import (
	"slices"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
)

// testGetIntents pins GetIntents, the leader's read of its next due intents
// in one go: every stored intent asked for comes back exactly as GetIntent
// returns it, attempts (finished, open, not sent) included, whatever its
// status; an intentId not stored is left out; asking for none returns none.
func testGetIntents(t *testing.T, h Harness) {
	f := leader(t, h)
	for _, id := range []string{"intent-a", "intent-b", "intent-c", "intent-d"} {
		mustCreate(t, h.Store, newIntent(id, smsContract("alerts"), `{"to":"`+id+`"}`, base))
	}
	start(t, h.Store, f, "intent-b", 1, at(1))
	finish(t, h.Store, retryAfter(f, "intent-b", 1, at(2), at(5002)))
	start(t, h.Store, f, "intent-b", 2, at(5003)) // left open: in doubt
	complete(t, h.Store, accept(f, "intent-c", 1, at(4)))

	got, err := h.Store.GetIntents(t.Context(), []string{"intent-c", "no-such-intent", "intent-a", "intent-b"})
	if err != nil {
		t.Fatalf("GetIntents: %v", err)
	}
	ids := intentIDs(got)
	slices.Sort(ids)
	if want := []string{"intent-a", "intent-b", "intent-c"}; !slices.Equal(ids, want) {
		t.Fatalf("GetIntents returned %v, want %v", ids, want)
	}
	for _, in := range got {
		assertIntent(t, in, mustGet(t, h.Store, in.IntentID))
		for i, a := range in.Attempts {
			if a.Sent != mustGet(t, h.Store, in.IntentID).Attempts[i].Sent {
				t.Errorf("intent %s attempt %d: Sent differs from GetIntent's", in.IntentID, a.Number)
			}
		}
	}
	if c := got[slices.IndexFunc(got, func(in core.Intent) bool { return in.IntentID == "intent-c" })]; c.Status != core.StatusAccepted {
		t.Errorf("intent-c status %s, want accepted", c.Status)
	}

	none, err := h.Store.GetIntents(t.Context(), nil)
	if err != nil || len(none) != 0 {
		t.Fatalf("GetIntents of no intentIds: %d intents, err %v", len(none), err)
	}
}

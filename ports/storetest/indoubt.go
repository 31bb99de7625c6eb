package storetest

import (
	"context"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// testPossiblyAccepted: a FinishAttempt whose decision says PossiblyAccepted
// flags the intent for good (a later decision without it keeps the flag),
// the flag reads back through GetIntent and ListIntents, and the listing
// filtered on it returns exactly the flagged intents, with the other
// filters and paging applied.
func testPossiblyAccepted(t *testing.T, h Harness) {
	ctx := context.Background()
	f := leader(t, h)
	c := smsContract("sms.flag")
	for i, id := range []string{"pa-1", "pa-2", "pa-3"} {
		mustCreate(t, h.Store, newIntent(id, c, `{}`, at(i)))
	}
	dup := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonDuplicateReference}
	for _, id := range []string{"pa-1", "pa-3"} {
		complete(t, h.Store, retryAfter(f, id, 1, at(10), at(20)))
		p := retryAfter(f, id, 2, at(30), at(40))
		p.Error, p.Outcome, p.Decision.PossiblyAccepted = "", &dup, true
		complete(t, h.Store, p)
	}
	complete(t, h.Store, retryAfter(f, "pa-2", 1, at(10), at(20)))
	complete(t, h.Store, exhaust(f, "pa-3", 3, at(50)))

	flags := map[string]bool{"pa-1": true, "pa-2": false, "pa-3": true}
	for id, want := range flags {
		if got := mustGet(t, h.Store, id); got.PossiblyAccepted != want {
			t.Errorf("GetIntent(%s).PossiblyAccepted = %v, want %v", id, got.PossiblyAccepted, want)
		}
	}
	// Every other read of stored intents carries the flag too: many at once,
	// and a batch that finds the ids taken.
	many, err := h.Store.GetIntents(ctx, []string{"pa-1", "pa-2", "pa-3"})
	if err != nil {
		t.Fatal(err)
	}
	var again []core.Intent
	for _, in := range many {
		if in.PossiblyAccepted != flags[in.IntentID] {
			t.Errorf("GetIntents: %s.PossiblyAccepted = %v, want %v", in.IntentID, in.PossiblyAccepted, flags[in.IntentID])
		}
		again = append(again, newIntent(in.IntentID, c, `{}`, at(90)))
	}
	taken, err := h.Store.CreateIntents(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range taken {
		if r.Created || r.Intent.PossiblyAccepted != flags[r.Intent.IntentID] {
			t.Errorf("CreateIntents of the taken id %s: created=%v PossiblyAccepted=%v, want the stored intent with %v",
				r.Intent.IntentID, r.Created, r.Intent.PossiblyAccepted, flags[r.Intent.IntentID])
		}
	}
	list := func(p ports.ListIntentsParams) []string {
		t.Helper()
		p.PossiblyAccepted = true
		got, err := h.Store.ListIntents(ctx, p)
		if err != nil {
			t.Fatalf("ListIntents(%+v): %v", p, err)
		}
		ids := make([]string, len(got))
		for i, in := range got {
			ids[i] = in.IntentID
			if !in.PossiblyAccepted {
				t.Errorf("listed %s without its flag", in.IntentID)
			}
		}
		return ids
	}
	assertIDs := func(what string, got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: %v, want %v", what, got, want)
			}
		}
	}
	assertIDs("flagged", list(ports.ListIntentsParams{Limit: 10}), "pa-3", "pa-1")
	assertIDs("flagged, first page", list(ports.ListIntentsParams{Limit: 1}), "pa-3")
	pa3 := mustGet(t, h.Store, "pa-3")
	assertIDs("flagged, after pa-3", list(ports.ListIntentsParams{Limit: 10,
		Before: &ports.IntentPosition{CreatedAt: pa3.CreatedAt, IntentID: "pa-3"}}), "pa-1")
	assertIDs("flagged and pending", list(ports.ListIntentsParams{Limit: 10, Status: core.StatusPending}), "pa-1")
	assertIDs("flagged and exhausted on the target", list(ports.ListIntentsParams{Limit: 10,
		Status: core.StatusExhausted, SubmissionTarget: "sms.flag"}), "pa-3")
	assertIDs("flagged on another target", list(ports.ListIntentsParams{Limit: 10, SubmissionTarget: "other"}))
}

package storetest

import (
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// testNotBefore holds a store to the scheduled-send contract: the client's
// notBefore is stored as sent, read back by every read path, kept across a
// restart, and the first attempt is due then, so the rebuild (ListPending)
// and the refresh (ListChanged) schedule it without knowing about it.
func testNotBefore(t *testing.T, h Harness) {
	notBefore := base.Add(time.Hour + 123*time.Microsecond)
	scheduled := newIntent("scheduled", smsContract("alerts"), `{"s":1}`, base).WithNotBefore(notBefore)
	plain := newIntent("plain", smsContract("alerts"), `{"p":1}`, at(1))
	for _, in := range []core.Intent{scheduled, plain} {
		created := mustCreate(t, h.Store, in)
		if !created.NotBefore.Equal(in.NotBefore) || !created.NextDueAt.Equal(in.NextDueAt) {
			t.Fatalf("created %s: NotBefore %v NextDueAt %v, want %v and %v",
				in.IntentID, created.NotBefore, created.NextDueAt, in.NotBefore, in.NextDueAt)
		}
	}
	check := func(h Harness, when string) {
		t.Helper()
		for _, want := range []core.Intent{scheduled, plain} {
			got := mustGet(t, h.Store, want.IntentID)
			if !got.NotBefore.Equal(want.NotBefore) || got.NotBefore.IsZero() != want.NotBefore.IsZero() {
				t.Errorf("%s: GetIntent(%s).NotBefore = %v, want %v", when, want.IntentID, got.NotBefore, want.NotBefore)
			}
		}
		listed, err := h.Store.ListIntents(t.Context(), ports.ListIntentsParams{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range listed {
			if got.IntentID == "scheduled" && !got.NotBefore.Equal(notBefore) {
				t.Errorf("%s: ListIntents shows NotBefore %v, want %v", when, got.NotBefore, notBefore)
			}
		}
		pending, err := h.Store.ListPending(t.Context(), ports.ListPendingParams{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range pending {
			if row.IntentID == "scheduled" && !row.NextDueAt.Equal(notBefore) {
				t.Errorf("%s: the rebuild sees the scheduled intent due at %v, want its notBefore %v", when, row.NextDueAt, notBefore)
			}
		}
	}
	check(h, "before restart")
	check(h.Restart(t), "after restart")
}

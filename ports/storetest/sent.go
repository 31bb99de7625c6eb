package storetest

import (
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// testAttemptSent pins Sent as data: an open attempt reads as sent (its
// reservation precedes the gateway call, which may have been made before a
// crash), and a finished one reads as FinishAttempt wrote it, through every
// read path.
func testAttemptSent(t *testing.T, h Harness) {
	f := leader(t, h)
	mustCreate(t, h.Store, newIntent("intent-1", smsContract("alerts"), `{}`, base))
	start(t, h.Store, f, "intent-1", 1, at(1))
	if got := mustGet(t, h.Store, "intent-1"); !got.Attempts[0].Sent {
		t.Error("an open attempt reads as not sent; its call may have been made")
	}
	unsent := retryAfter(f, "intent-1", 1, at(2), at(3))
	unsent.Error, unsent.Sent = "not submitted", false
	finish(t, h.Store, unsent)
	start(t, h.Store, f, "intent-1", 2, at(4))
	sent := retryAfter(f, "intent-1", 2, at(5), at(6))
	sent.Sent = true
	finish(t, h.Store, sent)

	want := []bool{false, true}
	got := mustGet(t, h.Store, "intent-1")
	listed, err := h.Store.ListIntents(t.Context(), ports.ListIntentsParams{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]core.Intent{"GetIntent": got, "ListIntents": listed[0]} {
		if len(in.Attempts) != len(want) {
			t.Fatalf("%s: %d attempts, want %d", name, len(in.Attempts), len(want))
		}
		for i, a := range in.Attempts {
			if a.Sent != want[i] {
				t.Errorf("%s: attempt %d Sent=%v, want %v as FinishAttempt wrote it", name, a.Number, a.Sent, want[i])
			}
		}
	}
}

// testCreateNeedsNextDue pins that a pending intent without NextDueAt is
// refused, not given a due time the store made up.
func testCreateNeedsNextDue(t *testing.T, h Harness) {
	in := newIntent("intent-1", smsContract("alerts"), `{}`, base)
	in.NextDueAt = time.Time{}
	if _, err := h.Store.CreateIntent(t.Context(), in); err == nil {
		t.Fatal("CreateIntent accepted a pending intent without NextDueAt")
	}
	_, err := h.Store.GetIntent(t.Context(), "intent-1")
	wantErr(t, "GetIntent after a refused create", err, core.ErrIntentNotFound)
}

// testFinishNeedsOneResult pins that an attempt closes with exactly one of
// an outcome and an error, never with an outcome when it was not sent, and
// that a refused close writes nothing.
func testFinishNeedsOneResult(t *testing.T, h Harness) {
	f := leader(t, h)
	mustCreate(t, h.Store, newIntent("intent-1", smsContract("alerts"), `{}`, base))
	start(t, h.Store, f, "intent-1", 1, at(1))
	before := mustGet(t, h.Store, "intent-1")
	neither := retryAfter(f, "intent-1", 1, at(2), at(3))
	neither.Error = ""
	both := accept(f, "intent-1", 1, at(2))
	both.Error = "gateway timeout"
	unsent := accept(f, "intent-1", 1, at(2))
	unsent.Sent = false
	for name, p := range map[string]ports.FinishAttemptParams{
		"neither an outcome nor an error": neither,
		"both an outcome and an error":    both,
		"an outcome but not sent":         unsent,
	} {
		if err := h.Store.FinishAttempt(t.Context(), p); err == nil {
			t.Errorf("FinishAttempt with %s succeeded", name)
		}
	}
	assertUnchanged(t, h.Store, before)
}

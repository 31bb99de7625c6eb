package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

// testStartAttemptsMixed holds StartAttempts to its promise: one answer per
// item, in order, each what StartAttempt would answer alone, with every
// runnable item written and nothing of a refused one.
func testStartAttemptsMixed(t *testing.T, h Harness) {
	f := leader(t, h)
	for _, id := range []string{"a", "b", "c", "A"} {
		mustCreate(t, h.Store, newIntent(id, smsContract("alerts"), `{}`, base))
	}
	start(t, h.Store, f, "b", 1, at(1)) // b's next attempt is 2
	before := mustGet(t, h.Store, "c")
	items := []ports.StartAttemptParams{
		{Fence: f, IntentID: "a", Number: 1, StartedAt: at(5)},
		{Fence: f, IntentID: "b", Number: 1, StartedAt: at(5)}, // already started
		{Fence: f, IntentID: "missing", Number: 1, StartedAt: at(5)},
		{Fence: f, IntentID: "c", Number: 1},                   // no start time
		{Fence: f, IntentID: "a", Number: 1, StartedAt: at(6)}, // a again
		{Fence: f, IntentID: "A", Number: 1, StartedAt: at(7)}, // another intent than "a"
	}
	errs := h.Store.StartAttempts(t.Context(), items)
	if len(errs) != len(items) {
		t.Fatalf("%d answers for %d items", len(errs), len(items))
	}
	wantErr(t, "item a", errs[0], nil)
	wantErr(t, "item b, started already", errs[1], core.ErrIntentNotRunnable)
	wantErr(t, "item missing", errs[2], core.ErrIntentNotFound)
	wantErr(t, "item c without a start time", errs[3], ports.ErrInvalidWrite)
	wantErr(t, "item a named twice", errs[4], ports.ErrInvalidWrite)
	wantErr(t, "item A", errs[5], nil)
	for id, ms := range map[string]int{"a": 5, "A": 7} {
		got := mustGet(t, h.Store, id)
		if got.AttemptCount != 1 || len(got.Attempts) != 1 || !got.Attempts[0].StartedAt.Equal(at(ms)) ||
			got.Attempts[0].HolderID != f.HolderID || got.Attempts[0].Epoch != f.Epoch {
			t.Fatalf("%s after the batch: %+v", id, got)
		}
	}
	if b := mustGet(t, h.Store, "b"); b.AttemptCount != 1 || len(b.Attempts) != 1 {
		t.Fatalf("the refused item changed b: %+v", b)
	}
	assertUnchanged(t, h.Store, before)
}

// testFinishAttemptsMixed is testStartAttemptsMixed for FinishAttempts: a
// retry, an acceptance, a flagged exhaustion, an attempt already closed, a
// missing intent and a malformed item in one batch.
func testFinishAttemptsMixed(t *testing.T, h Harness) {
	f := leader(t, h)
	for _, id := range []string{"retry", "accept", "exhaust", "closed"} {
		mustCreate(t, h.Store, newIntent(id, smsContract("alerts"), `{}`, base))
		start(t, h.Store, f, id, 1, at(1))
	}
	finish(t, h.Store, retryAfter(f, "closed", 1, at(2), at(3)))
	closedBefore := mustGet(t, h.Store, "closed")
	// The flag follows an attempt in doubt (core.PossiblyAccepted): the
	// exhausted intent's second attempt is the one the batch closes.
	finish(t, h.Store, retryAfter(f, "exhaust", 1, at(2), at(3)))
	start(t, h.Store, f, "exhaust", 2, at(3))
	exhaust := ports.FinishAttemptParams{Fence: f, IntentID: "exhaust", Number: 2, FinishedAt: at(4),
		Error: "timeout", Sent: true,
		Decision: core.Decision{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedMaxAttempts, PossiblyAccepted: true}}
	malformed := accept(f, "accept", 1, at(4))
	malformed.Error = "and an outcome"
	items := []ports.FinishAttemptParams{
		retryAfter(f, "retry", 1, at(4), at(9)),
		accept(f, "accept", 1, at(4)),
		exhaust,
		retryAfter(f, "closed", 1, at(4), at(9)), // its attempt 1 is closed
		retryAfter(f, "missing", 1, at(4), at(9)),
		malformed, // names accept again, and is malformed
	}
	errs := h.Store.FinishAttempts(t.Context(), items)
	if len(errs) != len(items) {
		t.Fatalf("%d answers for %d items", len(errs), len(items))
	}
	wantErr(t, "retry", errs[0], nil)
	wantErr(t, "accept", errs[1], nil)
	wantErr(t, "exhaust", errs[2], nil)
	wantErr(t, "closed attempt", errs[3], core.ErrIntentNotRunnable)
	wantErr(t, "missing intent", errs[4], core.ErrIntentNotFound)
	wantErr(t, "malformed", errs[5], ports.ErrInvalidWrite)
	if got := mustGet(t, h.Store, "retry"); got.Status != core.StatusPending || !got.NextDueAt.Equal(at(9)) ||
		!got.Attempts[0].Finished() || got.Attempts[0].Error == "" {
		t.Fatalf("retry after the batch: %+v", got)
	}
	if got := mustGet(t, h.Store, "accept"); got.Status != core.StatusAccepted || got.FinalOutcome == nil ||
		got.Attempts[0].Outcome == nil || got.Attempts[0].Outcome.MessageID != "msg-accept" {
		t.Fatalf("accept after the batch: %+v", got)
	}
	if got := mustGet(t, h.Store, "exhaust"); got.Status != core.StatusExhausted ||
		got.ExhaustedReason != core.ExhaustedMaxAttempts || !got.PossiblyAccepted {
		t.Fatalf("exhaust after the batch: %+v", got)
	}
	assertUnchanged(t, h.Store, closedBefore)
}

// testBatchesFenced checks that a batch under a fence that does not hold is
// refused item by item with core.ErrFenced and writes nothing, also where
// an item would be refused anyway.
func testBatchesFenced(t *testing.T, h Harness) {
	old := leasetest.MustAcquire(t, h.Leases, core.DefaultLeaseName, "storetest-leader", leasetest.LongLease)
	ids := []string{"one", "two", "three"}
	for _, id := range ids {
		openAttempt(t, h, old.Fence(), id)
	}
	if err := h.Leases.Release(t.Context(), old.Fence()); err != nil {
		t.Fatal(err)
	}
	leasetest.MustAcquire(t, h.Leases, core.DefaultLeaseName, "storetest-leader", leasetest.LongLease)
	f := old.Fence()
	var befores []core.Intent
	var starts []ports.StartAttemptParams
	var finishes []ports.FinishAttemptParams
	for i, id := range ids {
		befores = append(befores, mustGet(t, h.Store, id))
		starts = append(starts, ports.StartAttemptParams{Fence: f, IntentID: id, Number: 2 + i, StartedAt: at(10)})
		finishes = append(finishes, accept(f, id, 1, at(10)))
	}
	for i, err := range h.Store.FinishAttempts(t.Context(), finishes) {
		wantErr(t, fmt.Sprintf("stale FinishAttempts item %d", i), err, core.ErrFenced)
	}
	for i, err := range h.Store.StartAttempts(t.Context(), starts) {
		wantErr(t, fmt.Sprintf("stale StartAttempts item %d", i), err, core.ErrFenced)
	}
	for _, b := range befores {
		assertUnchanged(t, h.Store, b)
	}
	if errs := h.Store.StartAttempts(t.Context(), nil); len(errs) != 0 {
		t.Fatalf("an empty batch answered %v", errs)
	}
}

// testAttemptBatchesLarge holds a batch of many items to the same promise
// as a small one: 150 reservations and then their results, each answered in
// order, with missing intents, items not runnable and a malformed item
// spread through it, and long texts in its later items read back whole. A
// store may write a long batch in parts (SQL Server on Babelfish does); no
// item may then get another item's answer or text.
func testAttemptBatchesLarge(t *testing.T, h Harness) {
	f := leader(t, h)
	const n = 150
	id := func(i int) string { return fmt.Sprintf("large-%03d", i) }
	for i := range n {
		mustCreate(t, h.Store, newIntent(id(i), smsContract("alerts"), `{}`, base))
	}
	// Missing intents and attempt numbers not next recur, so that every
	// part of a long batch (64 items, say) holds some, and a malformed item
	// in the middle moves the positions of every item after it.
	kind := func(i int) string {
		switch {
		case i == 75:
			return "malformed"
		case i%20 == 7:
			return "missing"
		case i%20 == 13:
			return "not runnable"
		}
		return "runnable"
	}
	starts := make([]ports.StartAttemptParams, n)
	for i := range n {
		starts[i] = ports.StartAttemptParams{Fence: f, IntentID: id(i), Number: 1, StartedAt: at(i)}
		switch kind(i) {
		case "malformed":
			starts[i].StartedAt = time.Time{}
		case "missing":
			starts[i].IntentID = "missing-" + id(i)
		case "not runnable":
			starts[i].Number = 2
		}
	}
	answers := func(what string, errs []error) {
		t.Helper()
		if len(errs) != n {
			t.Fatalf("%s: %d answers for %d items", what, len(errs), n)
		}
		want := map[string]error{"runnable": nil, "missing": core.ErrIntentNotFound,
			"not runnable": core.ErrIntentNotRunnable, "malformed": ports.ErrInvalidWrite}
		for i, err := range errs {
			wantErr(t, fmt.Sprintf("%s %d (%s)", what, i, kind(i)), err, want[kind(i)])
		}
	}
	answers("reservation", h.Store.StartAttempts(t.Context(), starts))
	long := func(i int) string { return fmt.Sprintf("%03d:", i) + strings.Repeat("é~\"", 1400) }
	finishes := make([]ports.FinishAttemptParams, n)
	for i := range n {
		finishes[i] = retryAfter(f, id(i), 1, at(200+i), at(400+i))
		switch {
		case kind(i) == "malformed":
			finishes[i].Sent = false // with neither an outcome nor an error
			finishes[i].Error = ""
		case kind(i) == "missing":
			finishes[i].IntentID = "missing-" + id(i)
		case kind(i) == "not runnable":
			finishes[i].Number = 2
		case i%10 == 9:
			finishes[i].Error = long(i)
		}
	}
	answers("result", h.Store.FinishAttempts(t.Context(), finishes))
	for i := range n {
		got := mustGet(t, h.Store, id(i))
		switch kind(i) {
		case "runnable":
			want := finishes[i].Error
			if got.AttemptCount != 1 || len(got.Attempts) != 1 || !got.Attempts[0].StartedAt.Equal(at(i)) ||
				!got.Attempts[0].FinishedAt.Equal(at(200+i)) || got.Attempts[0].Error != want || !got.NextDueAt.Equal(at(400+i)) {
				t.Fatalf("%s after the batches: %+v, want attempt 1 started at %v, its error %.12q...", id(i), got, at(i), want)
			}
		default:
			if got.AttemptCount != 0 || len(got.Attempts) != 0 {
				t.Fatalf("%s (%s) after the batches: %+v, want no attempt", id(i), kind(i), got)
			}
		}
	}
}

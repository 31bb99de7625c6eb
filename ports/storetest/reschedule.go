package storetest

import (
	"context"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// testReschedule holds a store that implements ports.Rescheduler to it: a
// deferral moves next_due_at (and last_modified_at) without an attempt, an
// exhaustion ends the intent with deadline_exceeded, both fenced and
// conditional on the attempt count with no attempt open.
func testReschedule(t *testing.T, h Harness) {
	rs, ok := h.Store.(ports.Rescheduler)
	if !ok {
		t.Skip("this store does not implement ports.Rescheduler: the executor keeps deferrals in memory")
	}
	ctx := context.Background()
	f := leader(t, h)
	created := mustCreate(t, h.Store, newIntent("intent-1", smsContract("alerts"), `{}`, base))
	defer1 := ports.RescheduleParams{Fence: f, IntentID: "intent-1", AttemptCount: 0,
		Decision: core.Decision{Status: core.StatusPending, NextDueAt: at(10000)}}
	if err := rs.Reschedule(ctx, defer1); err != nil {
		t.Fatalf("Reschedule: %v", err)
	}
	got := mustGet(t, h.Store, "intent-1")
	want := created
	want.LastModifiedAt = got.LastModifiedAt
	want.NextDueAt = at(10000)
	assertIntent(t, got, want)
	if !got.LastModifiedAt.After(created.LastModifiedAt) {
		t.Fatal("Reschedule did not move last_modified_at")
	}

	// The attempt count must match, and no attempt may be open.
	stale := defer1
	stale.AttemptCount = 1
	wantErr(t, "Reschedule with a stale attempt count", rs.Reschedule(ctx, stale), core.ErrIntentNotRunnable)
	start(t, h.Store, f, "intent-1", 1, at(10001))
	open := defer1
	open.AttemptCount = 1
	wantErr(t, "Reschedule with an attempt open", rs.Reschedule(ctx, open), core.ErrIntentNotRunnable)
	finish(t, h.Store, retryAfter(f, "intent-1", 1, at(10002), at(15002)))

	// A fence that does not hold writes nothing.
	before := mustGet(t, h.Store, "intent-1")
	fenced := open
	fenced.Fence = core.Fence{LeaseName: "no-such-lease", HolderID: f.HolderID, Epoch: f.Epoch}
	wantErr(t, "Reschedule without the lease", rs.Reschedule(ctx, fenced), core.ErrFenced)
	assertUnchanged(t, h.Store, before)

	// Exhaustion by the deadline rule ends the intent without an attempt.
	end := ports.RescheduleParams{Fence: f, IntentID: "intent-1", AttemptCount: 1,
		Decision: core.Decision{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedDeadlineExceeded}}
	if err := rs.Reschedule(ctx, end); err != nil {
		t.Fatalf("Reschedule to exhausted: %v", err)
	}
	got = mustGet(t, h.Store, "intent-1")
	if got.Status != core.StatusExhausted || got.ExhaustedReason != core.ExhaustedDeadlineExceeded ||
		!got.NextDueAt.IsZero() || got.AttemptCount != 1 || len(got.Attempts) != 1 {
		t.Fatalf("after the exhausting reschedule: %+v", got)
	}
	wantErr(t, "Reschedule of a terminal intent", rs.Reschedule(ctx, end), core.ErrIntentNotRunnable)
	missing := defer1
	missing.IntentID = "no-such-intent"
	wantErr(t, "Reschedule of a missing intent", rs.Reschedule(ctx, missing), core.ErrIntentNotFound)
}

// RunReschedule runs only the ports.Rescheduler case, for stores (such as
// the in-memory fake) that are held to it without the whole suite.
func RunReschedule(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	t.Run("Reschedule", func(t *testing.T) { testReschedule(t, newHarness(t)) })
}

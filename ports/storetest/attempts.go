package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

func testStartAttempt(t *testing.T, h Harness) {
	f := leader(t, h)
	created := mustCreate(t, h.Store, newIntent("intent-1", smsContract("alerts"), `{}`, base))
	start(t, h.Store, f, "intent-1", 1, at(3))
	got := mustGet(t, h.Store, "intent-1")
	want := created
	want.LastModifiedAt = time.Time{}
	want.AttemptCount = 1
	want.Attempts = []core.Attempt{{Number: 1, StartedAt: at(3)}}
	assertIntent(t, got, want)
	if got.Attempts[0].Finished() {
		t.Fatal("a started attempt reads as finished")
	}
	if !got.LastModifiedAt.After(created.LastModifiedAt) {
		t.Fatalf("StartAttempt left last_modified_at at %v (was %v): every update must move it",
			got.LastModifiedAt, created.LastModifiedAt)
	}
}

func testStartAttemptNotRunnable(t *testing.T, h Harness) {
	f := leader(t, h)
	mustCreate(t, h.Store, newIntent("intent-1", smsContract("alerts"), `{}`, base))
	for _, n := range []int{0, 2, 3} {
		err := h.Store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: f, IntentID: "intent-1", Number: n, StartedAt: at(1)})
		wantErr(t, "StartAttempt with a number other than count+1", err, core.ErrIntentNotRunnable)
	}
	start(t, h.Store, f, "intent-1", 1, at(1))
	err := h.Store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: f, IntentID: "intent-1", Number: 1, StartedAt: at(2)})
	wantErr(t, "StartAttempt of a number already started", err, core.ErrIntentNotRunnable)
	err = h.Store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: f, IntentID: "missing", Number: 1, StartedAt: at(2)})
	wantErr(t, "StartAttempt of a missing intent", err, core.ErrIntentNotFound)
	if got := mustGet(t, h.Store, "intent-1"); got.AttemptCount != 1 || len(got.Attempts) != 1 {
		t.Fatalf("refused starts changed the intent: count %d, %d attempts", got.AttemptCount, len(got.Attempts))
	}
}

func testStartAttemptConcurrent(t *testing.T, h Harness) {
	f := leader(t, h)
	mustCreate(t, h.Store, newIntent("intent-1", smsContract("alerts"), `{}`, base))
	const n = 12
	errs := make([]error, n)
	startLine := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-startLine
			errs[i] = h.Store.StartAttempt(context.Background(), ports.StartAttemptParams{
				Fence: f, IntentID: "intent-1", Number: 1, StartedAt: at(i),
			})
		})
	}
	close(startLine)
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, core.ErrIntentNotRunnable):
			t.Fatalf("concurrent StartAttempt: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent starts of attempt 1 succeeded, want 1", won, n)
	}
	if got := mustGet(t, h.Store, "intent-1"); got.AttemptCount != 1 || len(got.Attempts) != 1 {
		t.Fatalf("after concurrent starts: count %d, %d attempts; want 1 and 1", got.AttemptCount, len(got.Attempts))
	}
}

func testFinishRetry(t *testing.T, h Harness) {
	f := leader(t, h)
	created := mustCreate(t, h.Store, newIntent("intent-1", smsContract("alerts"), `{}`, base))
	start(t, h.Store, f, "intent-1", 1, at(1))
	beforeFinish := mustGet(t, h.Store, "intent-1")
	finish(t, h.Store, retryAfter(f, "intent-1", 1, at(2), at(5002)))
	got := mustGet(t, h.Store, "intent-1")
	want := created
	want.LastModifiedAt = time.Time{}
	want.AttemptCount = 1
	want.NextDueAt = at(5002)
	want.Attempts = []core.Attempt{{Number: 1, StartedAt: at(1), FinishedAt: at(2), Error: "gateway timeout"}}
	assertIntent(t, got, want)
	if !got.LastModifiedAt.After(beforeFinish.LastModifiedAt) {
		t.Fatal("FinishAttempt did not move last_modified_at")
	}
	// A rejection that is not terminal keeps its outcome on the attempt.
	start(t, h.Store, f, "intent-1", 2, at(5003))
	rejected := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonDuplicateReference, MessageID: "m-2"}
	finish(t, h.Store, ports.FinishAttemptParams{
		Fence: f, IntentID: "intent-1", Number: 2, FinishedAt: at(5004), Outcome: &rejected, Sent: true,
		Decision: core.Decision{Status: core.StatusPending, NextDueAt: at(10004)},
	})
	got = mustGet(t, h.Store, "intent-1")
	want.AttemptCount = 2
	want.NextDueAt = at(10004)
	want.Attempts = append(want.Attempts, core.Attempt{Number: 2, StartedAt: at(5003), FinishedAt: at(5004), Outcome: &rejected})
	assertIntent(t, got, want)
}

func testFinishTerminal(t *testing.T, h Harness) {
	f := leader(t, h)
	rejected := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonInvalidRecipient}
	cases := []struct {
		id     string
		finish ports.FinishAttemptParams
		want   func(in *core.Intent)
	}{
		{"accepted", accept(f, "accepted", 1, at(2)), func(in *core.Intent) {
			in.Status = core.StatusAccepted
			in.FinalOutcome = &core.Outcome{Status: core.OutcomeAccepted, MessageID: "msg-accepted"}
		}},
		{"rejected", ports.FinishAttemptParams{
			Fence: f, IntentID: "rejected", Number: 1, FinishedAt: at(2), Outcome: &rejected, Sent: true,
			Decision: core.Decision{Status: core.StatusRejected, FinalOutcome: &rejected},
		}, func(in *core.Intent) {
			in.Status = core.StatusRejected
			in.FinalOutcome = &rejected
		}},
		{"exhausted", exhaust(f, "exhausted", 1, at(2)), func(in *core.Intent) {
			in.Status = core.StatusExhausted
			in.ExhaustedReason = core.ExhaustedMaxAttempts
		}},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			created := mustCreate(t, h.Store, newIntent(c.id, smsContract("alerts"), `{}`, base))
			start(t, h.Store, f, c.id, 1, at(1))
			finish(t, h.Store, c.finish)
			want := created
			want.LastModifiedAt = time.Time{}
			want.AttemptCount = 1
			want.NextDueAt = time.Time{}
			want.Attempts = []core.Attempt{{Number: 1, StartedAt: at(1), FinishedAt: at(2), Outcome: c.finish.Outcome}}
			c.want(&want)
			assertIntent(t, mustGet(t, h.Store, c.id), want)
		})
	}
}

func testFinishNotRunnable(t *testing.T, h Harness) {
	f := leader(t, h)
	mustCreate(t, h.Store, newIntent("intent-1", smsContract("alerts"), `{}`, base))
	err := h.Store.FinishAttempt(t.Context(), retryAfter(f, "intent-1", 1, at(2), at(3)))
	wantErr(t, "FinishAttempt of an attempt never started", err, core.ErrIntentNotRunnable)

	start(t, h.Store, f, "intent-1", 1, at(1))
	finish(t, h.Store, retryAfter(f, "intent-1", 1, at(2), at(3)))
	before := mustGet(t, h.Store, "intent-1")
	err = h.Store.FinishAttempt(t.Context(), accept(f, "intent-1", 1, at(4)))
	wantErr(t, "FinishAttempt of an attempt already finished", err, core.ErrIntentNotRunnable)
	assertUnchanged(t, h.Store, before)

	err = h.Store.FinishAttempt(t.Context(), accept(f, "missing", 1, at(4)))
	wantErr(t, "FinishAttempt of a missing intent", err, core.ErrIntentNotFound)

	// Attempt 1 was cut off (still open) and attempt 2 started: attempt 1
	// is no longer the intent's to finish, and nothing of it may change.
	mustCreate(t, h.Store, newIntent("intent-2", smsContract("alerts"), `{}`, base))
	start(t, h.Store, f, "intent-2", 1, at(1))
	start(t, h.Store, f, "intent-2", 2, at(2))
	before = mustGet(t, h.Store, "intent-2")
	err = h.Store.FinishAttempt(t.Context(), accept(f, "intent-2", 1, at(3)))
	wantErr(t, "FinishAttempt of a superseded attempt", err, core.ErrIntentNotRunnable)
	assertUnchanged(t, h.Store, before)
}

func testTerminalAppendOnly(t *testing.T, h Harness) {
	f := leader(t, h)
	mustCreate(t, h.Store, newIntent("intent-1", smsContract("alerts"), `{}`, base))
	complete(t, h.Store, accept(f, "intent-1", 1, at(2)))
	before := mustGet(t, h.Store, "intent-1")
	err := h.Store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: f, IntentID: "intent-1", Number: 2, StartedAt: at(3)})
	wantErr(t, "StartAttempt on an accepted intent", err, core.ErrIntentNotRunnable)
	err = h.Store.FinishAttempt(t.Context(), exhaust(f, "intent-1", 1, at(4)))
	wantErr(t, "FinishAttempt on an accepted intent", err, core.ErrIntentNotRunnable)
	assertUnchanged(t, h.Store, before)
}

func testAttemptsInOrder(t *testing.T, h Harness) {
	f := leader(t, h)
	mustCreate(t, h.Store, newIntent("intent-1", smsContract("alerts"), `{}`, base))
	// More than nine, so that a text ordering of numbers would show.
	const attempts = 12
	for n := 1; n < attempts; n++ {
		complete(t, h.Store, retryAfter(f, "intent-1", n, at(10*n), at(10*n+5)))
	}
	complete(t, h.Store, exhaust(f, "intent-1", attempts, at(10*attempts)))
	got := mustGet(t, h.Store, "intent-1")
	if got.AttemptCount != attempts || len(got.Attempts) != attempts {
		t.Fatalf("count %d with %d attempts, want %d", got.AttemptCount, len(got.Attempts), attempts)
	}
	for i, a := range got.Attempts {
		n := i + 1
		if a.Number != n || !a.StartedAt.Equal(at(10*n).Add(-time.Millisecond)) || !a.FinishedAt.Equal(at(10*n)) {
			t.Fatalf("attempt at index %d is number %d (%v to %v), want number %d", i, a.Number, a.StartedAt, a.FinishedAt, n)
		}
	}
	if last, _ := got.LastAttempt(); last.Outcome == nil || last.Outcome.Reason != core.ReasonProviderFailure {
		t.Fatalf("last attempt outcome %+v, want the exhausting rejection", last.Outcome)
	}
}

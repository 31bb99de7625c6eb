package sqlite

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// TestRefusalsInASharedBatchChangeNothing puts every kind of refused write
// into one batch with writes that succeed. The store runs them without
// savepoints, relying on each write to refuse before its first change; so a
// refused write must leave nothing behind, and the others must commit. The
// cases are the ones where a write could refuse late: finishing an attempt
// that a later one superseded (FinishAttempt alone would close it), starting
// an attempt whose row already exists (StartAttempt alone would count it),
// fenced writes, and an idempotency conflict.
func TestRefusalsInASharedBatchChangeNothing(t *testing.T) {
	db := openTestDB(t)
	ctx := t.Context()
	store := db.Store()
	lease, ok, err := db.Leases().Acquire(ctx, ports.AcquireLeaseParams{
		LeaseName: core.DefaultLeaseName, HolderID: "leader", Duration: time.Minute})
	if err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	fence := lease.Fence()
	stale := fence
	stale.Epoch--
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	createIntent := func(id string) error {
		_, err := store.CreateIntent(ctx, core.NewIntent(id, testContract(), []byte(`{"n":1}`), t0))
		return err
	}
	create := func(id string) {
		t.Helper()
		if err := createIntent(id); err != nil {
			t.Fatal(err)
		}
	}
	startAttempt := func(id string, n int) error {
		return store.StartAttempt(ctx, ports.StartAttemptParams{Fence: fence, IntentID: id, Number: n, StartedAt: t0})
	}
	retry := func(f core.Fence, id string, n int) ports.FinishAttemptParams {
		return ports.FinishAttemptParams{Fence: f, IntentID: id, Number: n, FinishedAt: t0, Error: "timeout",
			Decision: core.Decision{Status: core.StatusPending, NextDueAt: t0.Add(time.Second)}}
	}

	// superseded: attempt 1 was cut off (still open) and attempt 2 started.
	create("superseded")
	for n := 1; n <= 2; n++ {
		if err := startAttempt("superseded", n); err != nil {
			t.Fatal(err)
		}
	}
	// planted: attempt 1's row exists although the intent counts none.
	create("planted")
	if _, err := db.writeDB.ExecContext(ctx, `INSERT INTO submission_attempts
		(intent_id, attempt_number, holder_id, lease_epoch, started_at) VALUES ('planted', 1, 'leader', ?, 1)`, fence.Epoch); err != nil {
		t.Fatal(err)
	}
	create("open") // attempt 1 started, to be finished by a stale leader
	if err := startAttempt("open", 1); err != nil {
		t.Fatal(err)
	}
	create("fresh") // to be started by a stale leader
	before := map[string]core.Intent{}
	for _, id := range []string{"superseded", "planted", "open", "fresh"} {
		in, err := store.GetIntent(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		before[id] = in
	}

	writes := []struct {
		name string
		run  func() error
		want error // nil: must succeed
	}{
		{"create a", func() error { return createIntent("a") }, nil},
		{"finish the superseded attempt", func() error { return store.FinishAttempt(ctx, retry(fence, "superseded", 1)) }, core.ErrIntentNotRunnable},
		{"start over a planted row", func() error { return startAttempt("planted", 1) }, core.ErrIntentNotRunnable},
		{"finish fenced", func() error { return store.FinishAttempt(ctx, retry(stale, "open", 1)) }, core.ErrFenced},
		{"start fenced", func() error {
			return store.StartAttempt(ctx, ports.StartAttemptParams{Fence: stale, IntentID: "fresh", Number: 1, StartedAt: t0})
		}, core.ErrFenced},
		{"create under a taken id", func() error {
			res, err := store.CreateIntent(ctx, core.NewIntent("fresh", testContract(), []byte(`{"n":2}`), t0))
			if err == nil && (res.Created || string(res.Intent.Payload) == `{"n":2}`) {
				return errors.New("the taken id was written over")
			}
			return err
		}, nil},
		{"finish the open attempt", func() error { return store.FinishAttempt(ctx, retry(fence, "open", 1)) }, nil},
		{"create b", func() error { return createIntent("b") }, nil},
	}
	errs := inOneBatch(t, db, len(writes), func(i int) error { return writes[i].run() })
	for i, w := range writes {
		var conflict *core.IdempotencyConflictError
		switch {
		case w.want == nil && errs[i] != nil:
			t.Errorf("%s: %v, want success", w.name, errs[i])
		case errors.As(w.want, &conflict) && !errors.As(errs[i], &conflict):
			t.Errorf("%s: %v, want an idempotency conflict", w.name, errs[i])
		case w.want != nil && !errors.As(w.want, &conflict) && !errors.Is(errs[i], w.want):
			t.Errorf("%s: %v, want %v", w.name, errs[i], w.want)
		}
	}

	for _, id := range []string{"superseded", "planted", "fresh"} {
		got, err := store.GetIntent(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !sameState(got, before[id]) {
			t.Errorf("refused writes changed %s:\nbefore %+v\nafter  %+v", id, before[id], got)
		}
	}
	if open, err := store.GetIntent(ctx, "open"); err != nil || open.Attempts[0].FinishedAt.IsZero() || !open.NextDueAt.Equal(t0.Add(time.Second)) {
		t.Errorf("the finish that shared the batch did not commit: %+v %v", open, err)
	}
	for _, id := range []string{"a", "b"} {
		if !exists(t, db, id) {
			t.Errorf("intent %s, created in the batch, is missing", id)
		}
	}
}

// sameState reports whether nothing a write changes differs between a and b.
func sameState(a, b core.Intent) bool {
	if a.Status != b.Status || a.AttemptCount != b.AttemptCount || !a.LastModifiedAt.Equal(b.LastModifiedAt) ||
		!a.NextDueAt.Equal(b.NextDueAt) || len(a.Attempts) != len(b.Attempts) {
		return false
	}
	for i := range a.Attempts {
		if a.Attempts[i].FinishedAt.IsZero() != b.Attempts[i].FinishedAt.IsZero() {
			return false
		}
	}
	return true
}

// inOneBatch runs n store calls concurrently and makes them share one
// write transaction: a first write holds the writer until all n are queued
// behind it. It returns each call's error.
func inOneBatch(t *testing.T, db *DB, n int, call func(i int) error) []error {
	t.Helper()
	release := make(chan struct{})
	held := make(chan struct{})
	gate := make(chan error, 1)
	go func() {
		gate <- db.writer.do(context.Background(), "gate", oneStatement, func(context.Context, *writeTx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	errs := make([]error, n)
	done := make(chan int, n)
	for i := range n {
		go func() {
			errs[i] = call(i)
			done <- i
		}()
	}
	if !queueReached(n, func() int { return len(db.writer.ops) }) {
		close(release)
		t.Fatalf("only %d of %d writes queued behind the gate", len(db.writer.ops), n)
	}
	close(release)
	if err := <-gate; err != nil {
		t.Fatalf("gate: %v", err)
	}
	for range n {
		<-done
	}
	return errs
}

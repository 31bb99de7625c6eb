package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The run-now cases of ports.InterventionStore, and the intent's history
// of both actions (interventionCases lists them).

// testRunNow: a pending intent due later becomes due at the store's now,
// with a newer change marker the refresh reads and one event; its
// notBefore and everything else stay. An intent already due is left as it
// is.
func testRunNow(t *testing.T, h Harness) {
	later := newIntent("later", smsContract("alerts"), `{}`, base)
	later.NextDueAt, later.NotBefore = farAhead, farAhead
	before := mustCreate(t, h.Store, later)
	cursor := ports.ChangeCursor{LastModifiedAt: before.LastModifiedAt, IntentID: "later"}
	applied, err := runNow(t, h, "later", consoleSession)
	if err != nil || !applied {
		t.Fatalf("RunIntentNow = %v, %v; want applied", applied, err)
	}
	got := mustGet(t, h.Store, "later")
	if !got.NextDueAt.Before(farAhead) || got.NextDueAt.After(got.LastModifiedAt) {
		t.Fatalf("after RunIntentNow the intent is due at %v (changed at %v); want the store's now", got.NextDueAt, got.LastModifiedAt)
	}
	if !got.LastModifiedAt.After(before.LastModifiedAt) {
		t.Errorf("RunIntentNow did not move last_modified_at past %v (got %v)", before.LastModifiedAt, got.LastModifiedAt)
	}
	want := before
	want.LastModifiedAt, want.NextDueAt = time.Time{}, got.NextDueAt
	assertIntent(t, got, want)
	if !got.NotBefore.Equal(farAhead) {
		t.Errorf("RunIntentNow changed notBefore to %v", got.NotBefore)
	}
	if row, ok := changedRow(t, h, cursor, "later"); !ok || row.Status != core.StatusPending || !row.NextDueAt.Equal(got.NextDueAt) {
		t.Errorf("the changes after RunIntentNow show it as %+v (found %v), want due at %v", row, ok, got.NextDueAt)
	}
	assertEvents(t, mustEvents(t, h, "later"), core.IntentEvent{Action: core.ActionRunNow, Actor: consoleSession})

	// Due now, it is due: again is a no-op, as for an intent due since
	// long ago.
	mustCreate(t, h.Store, newIntent("due", smsContract("alerts"), `{}`, base))
	for _, id := range []string{"later", "due"} {
		before := mustGet(t, h.Store, id)
		applied, err := runNow(t, h, id, apiOperator)
		if err != nil || applied {
			t.Errorf("RunIntentNow(%s) on a due intent = %v, %v; want not applied, no error", id, applied, err)
		}
		assertUnchanged(t, h.Store, before)
	}
	if n := len(mustEvents(t, h, "due")); n != 0 {
		t.Errorf("a no-op run now recorded %d events", n)
	}
}

// testRunNowRefusals: an ended or missing intent and a malformed actor are
// refused, and nothing is written.
func testRunNowRefusals(t *testing.T, h Harness) {
	f := leader(t, h)
	mustCreate(t, h.Store, newIntent("accepted", smsContract("alerts"), `{}`, base))
	complete(t, h.Store, accept(f, "accepted", 1, at(2)))
	later := newIntent("later", smsContract("alerts"), `{}`, base)
	later.NextDueAt = farAhead
	mustCreate(t, h.Store, later)
	for _, c := range []struct {
		id   string
		who  core.Actor
		want error
	}{
		{"accepted", apiOperator, core.ErrIntentEnded},
		{"later", core.Actor{Surface: ports.SurfaceConsole, Role: core.RoleOperator, Session: "0123456789AB"}, ports.ErrInvalidWrite},
		{"", apiOperator, ports.ErrInvalidWrite},
	} {
		var before core.Intent
		if c.id != "" {
			before = mustGet(t, h.Store, c.id)
		}
		applied, err := runNow(t, h, c.id, c.who)
		wantErr(t, fmt.Sprintf("run now of %q by %+v", c.id, c.who), err, c.want)
		if applied {
			t.Errorf("a refused run now of %q reports applied", c.id)
		}
		if c.id != "" {
			assertUnchanged(t, h.Store, before)
		}
	}
	_, err := runNow(t, h, "ghost", apiOperator)
	wantErr(t, "run now of a missing intent", err, core.ErrIntentNotFound)
}

// testEventsKept: events of several actions come back in order, with their
// actors, only for their own intent, and survive a restart.
func testEventsKept(t *testing.T, h Harness) {
	for _, id := range []string{"a", "b"} {
		in := newIntent(id, smsContract("alerts"), `{}`, base)
		in.NextDueAt = farAhead
		mustCreate(t, h.Store, in)
	}
	if applied, err := runNow(t, h, "a", apiOperator); err != nil || !applied {
		t.Fatalf("RunIntentNow(a) = %v, %v", applied, err)
	}
	if applied, err := cancel(t, h, "a", consoleSession); err != nil || !applied {
		t.Fatalf("CancelIntent(a) = %v, %v", applied, err)
	}
	want := []core.IntentEvent{{Action: core.ActionRunNow, Actor: apiOperator}, {Action: core.ActionCancel, Actor: consoleSession}}
	assertEvents(t, mustEvents(t, h, "a"), want...)
	if events := mustEvents(t, h, "b"); len(events) != 0 {
		t.Errorf("another intent's events show on b: %+v", events)
	}
	kept := mustEvents(t, h, "a")
	h = h.Restart(t)
	after := mustEvents(t, h, "a")
	assertEvents(t, after, want...)
	for i := range after {
		if !after[i].At.Equal(kept[i].At) {
			t.Errorf("event %d at %v before the restart, %v after", i+1, kept[i].At, after[i].At)
		}
	}
}

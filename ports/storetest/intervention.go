package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// interventionCases are the cases of ports.InterventionStore; Run runs them
// with the rest.
var interventionCases = []storeCase{
	{"CancelPending", testCancelPending},
	{"CancelRefusals", testCancelRefusals},
	{"CancelEndsExecution", testCancelEndsExecution},
	{"CancelRacesStartAttempts", testCancelRacesStart},
	{"RunNow", testRunNow},
	{"RunNowRefusals", testRunNowRefusals},
	{"EventsInOrderAndKept", testEventsKept},
}

// The actors of the cases: an operator key on the API, a console session.
var (
	apiOperator    = core.Actor{Surface: ports.SurfaceAPI, Role: core.RoleOperator}
	consoleSession = core.Actor{Surface: ports.SurfaceConsole, Role: core.RoleOperator, Session: "0123456789ab"}
)

// farAhead is a next due time no store's clock reaches during the suite.
var farAhead = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

func cancel(t *testing.T, h Harness, id string, who core.Actor) (bool, error) {
	t.Helper()
	return h.Store.CancelIntent(t.Context(), ports.IntentActionParams{IntentID: id, Actor: who})
}

func runNow(t *testing.T, h Harness, id string, who core.Actor) (bool, error) {
	t.Helper()
	return h.Store.RunIntentNow(t.Context(), ports.IntentActionParams{IntentID: id, Actor: who})
}

func mustEvents(t *testing.T, h Harness, id string) []core.IntentEvent {
	t.Helper()
	events, err := h.Store.IntentEvents(t.Context(), id)
	if err != nil {
		t.Fatalf("IntentEvents(%s): %v", id, err)
	}
	return events
}

// assertEvents checks an intent's events against the actions and actors
// wanted, in order, numbered from 1, each at a time.
func assertEvents(t *testing.T, got []core.IntentEvent, want ...core.IntentEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("events = %+v, want %d events", got, len(want))
	}
	for i, e := range got {
		w := want[i]
		if e.Number != i+1 || e.Action != w.Action || e.Actor != w.Actor || e.At.IsZero() {
			t.Errorf("event %d = %+v, want number %d, action %s by %+v, at a time", i, e, i+1, w.Action, w.Actor)
		}
		if i > 0 && e.At.Before(got[i-1].At) {
			t.Errorf("event %d at %v is before event %d at %v", i+1, e.At, i, got[i-1].At)
		}
	}
}

// changedRow is the intent's row among the changes after cursor, as the
// leader's refresh reads them.
func changedRow(t *testing.T, h Harness, cursor ports.ChangeCursor, id string) (ports.ScheduleRow, bool) {
	t.Helper()
	rows, _ := readChanges(t, h.Store, cursor, 10)
	for _, r := range rows {
		if r.IntentID == id {
			return r, true
		}
	}
	return ports.ScheduleRow{}, false
}

// testCancelPending: a pending intent with no attempt open, fresh or after
// a failed attempt, ends exhausted/cancelled with no next due time, one
// event and a newer change marker; cancelling again writes nothing.
func testCancelPending(t *testing.T, h Harness) {
	f := leader(t, h)
	mustCreate(t, h.Store, newIntent("fresh", smsContract("alerts"), `{}`, base))
	mustCreate(t, h.Store, newIntent("retried", smsContract("alerts"), `{}`, base))
	complete(t, h.Store, retryAfter(f, "retried", 1, at(10), at(5000)))
	for _, id := range []string{"fresh", "retried"} {
		before := mustGet(t, h.Store, id)
		cursor := ports.ChangeCursor{LastModifiedAt: before.LastModifiedAt, IntentID: id}
		applied, err := cancel(t, h, id, apiOperator)
		if err != nil || !applied {
			t.Fatalf("CancelIntent(%s) = %v, %v; want applied", id, applied, err)
		}
		got := mustGet(t, h.Store, id)
		want := before
		want.LastModifiedAt = time.Time{}
		want.Status, want.ExhaustedReason, want.NextDueAt = core.StatusExhausted, core.ExhaustedCancelled, time.Time{}
		assertIntent(t, got, want)
		if !got.LastModifiedAt.After(before.LastModifiedAt) {
			t.Errorf("%s: the cancel did not move last_modified_at past %v (got %v)", id, before.LastModifiedAt, got.LastModifiedAt)
		}
		if row, ok := changedRow(t, h, cursor, id); !ok || row.Status != core.StatusExhausted {
			t.Errorf("%s: the changes after the cancel show it as %+v (found %v), want exhausted", id, row, ok)
		}
		assertEvents(t, mustEvents(t, h, id), core.IntentEvent{Action: core.ActionCancel, Actor: apiOperator})

		again, err := cancel(t, h, id, consoleSession)
		if err != nil || again {
			t.Fatalf("cancelling %s again = %v, %v; want not applied, no error", id, again, err)
		}
		assertUnchanged(t, h.Store, got)
		if n := len(mustEvents(t, h, id)); n != 1 {
			t.Errorf("%s: cancelling again recorded an event (%d events)", id, n)
		}
	}
}

// testCancelRefusals: an open attempt, an intent that ended otherwise, a
// missing intent and a malformed actor are refused, and nothing is written.
func testCancelRefusals(t *testing.T, h Harness) {
	f := leader(t, h)
	mustCreate(t, h.Store, newIntent("in-flight", smsContract("alerts"), `{}`, base))
	start(t, h.Store, f, "in-flight", 1, at(1))
	mustCreate(t, h.Store, newIntent("accepted", smsContract("alerts"), `{}`, base))
	complete(t, h.Store, accept(f, "accepted", 1, at(2)))
	mustCreate(t, h.Store, newIntent("exhausted", smsContract("alerts"), `{}`, base))
	complete(t, h.Store, exhaust(f, "exhausted", 1, at(3)))
	mustCreate(t, h.Store, newIntent("pending", smsContract("alerts"), `{}`, base))

	for _, c := range []struct {
		id   string
		who  core.Actor
		want error
	}{
		{"in-flight", apiOperator, core.ErrAttemptInFlight},
		{"accepted", apiOperator, core.ErrIntentEnded},
		{"exhausted", consoleSession, core.ErrIntentEnded},
		{"pending", core.Actor{Surface: "cli", Role: core.RoleOperator}, ports.ErrInvalidWrite},
		{"pending", core.Actor{Surface: ports.SurfaceAPI, Role: core.RoleOperator, Session: "0123456789ab"}, ports.ErrInvalidWrite},
		{"pending", core.Actor{Surface: ports.SurfaceConsole, Role: core.RoleOperator, Session: "not-a-tag"}, ports.ErrInvalidWrite},
		{"pending", core.Actor{Surface: ports.SurfaceAPI, Role: core.Role(7)}, ports.ErrInvalidWrite},
	} {
		before := mustGet(t, h.Store, c.id)
		applied, err := cancel(t, h, c.id, c.who)
		wantErr(t, fmt.Sprintf("cancelling %s by %+v", c.id, c.who), err, c.want)
		if applied {
			t.Errorf("a refused cancel of %s reports applied", c.id)
		}
		assertUnchanged(t, h.Store, before)
		if events := mustEvents(t, h, c.id); len(events) != 0 {
			t.Errorf("a refused cancel of %s recorded %+v", c.id, events)
		}
	}
	_, err := cancel(t, h, "ghost", apiOperator)
	wantErr(t, "cancelling a missing intent", err, core.ErrIntentNotFound)
	if events := mustEvents(t, h, "ghost"); len(events) != 0 {
		t.Errorf("a missing intent has events %+v", events)
	}

	// Once its attempt is finished, the intent can be cancelled.
	finish(t, h.Store, retryAfter(f, "in-flight", 1, at(4), at(5000)))
	if applied, err := cancel(t, h, "in-flight", apiOperator); err != nil || !applied {
		t.Fatalf("cancelling after the attempt finished = %v, %v", applied, err)
	}
}

// testCancelEndsExecution: after a cancel, the executor's writes find the
// intent not runnable and change nothing.
func testCancelEndsExecution(t *testing.T, h Harness) {
	f := leader(t, h)
	mustCreate(t, h.Store, newIntent("intent-1", smsContract("alerts"), `{}`, base))
	if applied, err := cancel(t, h, "intent-1", apiOperator); err != nil || !applied {
		t.Fatalf("CancelIntent = %v, %v", applied, err)
	}
	cancelled := mustGet(t, h.Store, "intent-1")
	err := h.Store.StartAttempts(t.Context(), []ports.StartAttemptParams{{Fence: f, IntentID: "intent-1", Number: 1, StartedAt: at(1)}})[0]
	wantErr(t, "StartAttempts after a cancel", err, core.ErrIntentNotRunnable)
	err = h.Store.Reschedule(t.Context(), ports.RescheduleParams{Fence: f, IntentID: "intent-1",
		Decision: core.Decision{Status: core.StatusPending, NextDueAt: at(9000)}})
	wantErr(t, "Reschedule after a cancel", err, core.ErrIntentNotRunnable)
	_, err = runNow(t, h, "intent-1", apiOperator)
	wantErr(t, "RunIntentNow after a cancel", err, core.ErrIntentEnded)
	assertUnchanged(t, h.Store, cancelled)
}

// testCancelRacesStart: cancels and the executor's reservations of the same
// intents, released together. Of each pair exactly one wins: a cancelled
// intent has no new attempt and its reservation was refused as not
// runnable; a reserved one has its attempt open and its cancel was refused
// as in flight. Never both, never neither.
func testCancelRacesStart(t *testing.T, h Harness) {
	f := leader(t, h)
	const n = 16
	var starts []ports.StartAttemptParams
	for i := range n {
		id := fmt.Sprintf("race-%02d", i)
		mustCreate(t, h.Store, newIntent(id, smsContract("alerts"), `{}`, base))
		number := 1
		if i%2 == 1 { // half of them after a failed attempt
			complete(t, h.Store, retryAfter(f, id, 1, at(10), at(20)))
			number = 2
		}
		starts = append(starts, ports.StartAttemptParams{Fence: f, IntentID: id, Number: number, StartedAt: at(30)})
	}
	cancelErrs := make([]error, n)
	cancelled := make([]bool, n)
	var startErrs []error
	startLine := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		<-startLine
		startErrs = h.Store.StartAttempts(t.Context(), starts)
	})
	for i := range n {
		wg.Go(func() {
			<-startLine
			cancelled[i], cancelErrs[i] = h.Store.CancelIntent(t.Context(),
				ports.IntentActionParams{IntentID: starts[i].IntentID, Actor: apiOperator})
		})
	}
	close(startLine)
	wg.Wait()
	for i, p := range starts {
		got := mustGet(t, h.Store, p.IntentID)
		events := mustEvents(t, h, p.IntentID)
		switch {
		case cancelErrs[i] == nil && cancelled[i] && errors.Is(startErrs[i], core.ErrIntentNotRunnable):
			if got.Status != core.StatusExhausted || got.ExhaustedReason != core.ExhaustedCancelled ||
				got.AttemptCount != p.Number-1 || len(got.Attempts) != p.Number-1 || len(events) != 1 {
				t.Errorf("%s: the cancel won, but the intent is %s/%s with %d attempts (%d rows) and %d events",
					p.IntentID, got.Status, got.ExhaustedReason, got.AttemptCount, len(got.Attempts), len(events))
			}
		case startErrs[i] == nil && errors.Is(cancelErrs[i], core.ErrAttemptInFlight) && !cancelled[i]:
			last, ok := got.LastAttempt()
			if got.Status != core.StatusPending || got.AttemptCount != p.Number || !ok || last.Number != p.Number ||
				last.Finished() || len(events) != 0 {
				t.Errorf("%s: the reservation won, but the intent is %s with %d attempts (last %+v) and %d events",
					p.IntentID, got.Status, got.AttemptCount, last, len(events))
			}
			// Its result is recorded as usual, and then it can be cancelled.
			finish(t, h.Store, retryAfter(f, p.IntentID, p.Number, at(40), at(5000)))
			if applied, err := cancel(t, h, p.IntentID, apiOperator); err != nil || !applied {
				t.Errorf("%s: cancelling after the attempt finished = %v, %v", p.IntentID, applied, err)
			}
		default:
			t.Errorf("%s: cancel = %v, %v and reservation = %v: want exactly one to win",
				p.IntentID, cancelled[i], cancelErrs[i], startErrs[i])
		}
	}
}

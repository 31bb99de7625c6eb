package executor

import (
	"context"
	"fmt"

	"github.com/submissionmanager/submission-manager/app/changes"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The schedule is a cache of the store: a new term rebuilds it from every
// pending intent, the refresh follows the store's changes after that, and
// this instance's own submissions arrive as notifications. The known-intent
// cache beside it spares an attempt its read of the intent.

// start rebuilds the schedule and reads the pauses: a new leader must not
// call a paused gateway even once.
func (t *term) start(ctx context.Context) error {
	if err := t.rebuild(ctx); err != nil {
		return err
	}
	if t.cfg.Protection.Pauses == nil {
		return nil
	}
	ps, err := t.cfg.Protection.Pauses.ListPauses(ctx)
	if err != nil {
		return fmt.Errorf("read gateway pauses: %w", err)
	}
	t.gates.SetPauses(ps)
	return nil
}

// afterRefresh re-reads the pauses (another instance may have paused or
// resumed a gateway) and gives parked work its chance. A failed read keeps
// the last snapshot: the next refresh tries again.
func (t *term) afterRefresh(ctx context.Context) {
	if t.cfg.Protection.Pauses != nil {
		ps, err := t.cfg.Protection.Pauses.ListPauses(ctx)
		if err != nil {
			t.log.Warn("gateway_pauses_unread", "error", err.Error())
		} else {
			t.gates.SetPauses(ps)
		}
	}
	t.unparkAll()
}

// rebuild reads the refresh cursor first and then every pending intent, so
// a change made during the rebuild is seen again by the first refresh
// (refresh is idempotent) rather than missed.
func (t *term) rebuild(ctx context.Context) error {
	cursor, err := t.cfg.Store.LatestChange(ctx)
	if err != nil {
		return err
	}
	t.cursor = cursor
	after := ""
	for {
		rows, err := t.cfg.Store.ListPending(ctx, ports.ListPendingParams{AfterIntentID: after, Limit: t.cfg.RebuildPageSize})
		if err != nil {
			return err
		}
		for _, r := range rows {
			t.noteRow(r)
		}
		if len(rows) < t.cfg.RebuildPageSize {
			return nil
		}
		after = rows[len(rows)-1].IntentID
	}
}

// refresh pages through the intents changed since the cursor (intents
// created on other instances, and this leader's own writes) and advances the
// cursor to the last row read, exactly as the store returned it. With a
// RefreshLookback it starts that far behind the cursor, to catch changes
// that committed late; the cursor itself never moves backwards.
func (t *term) refresh(ctx context.Context) error {
	return changes.Follow(ctx, t.cfg.Store, &t.cursor, t.cfg.RefreshLookback, t.cfg.RefreshPageSize, t.noteRow)
}

// noteRow applies one row the store reported: a terminal intent leaves the
// schedule, a pending one is (re)scheduled at its due time. An intent in
// flight is left alone; its worker's result decides what follows.
func (t *term) noteRow(r ports.ScheduleRow) {
	if _, busy := t.inFlight[r.IntentID]; busy {
		return
	}
	if r.Status.Terminal() {
		t.schedule.Remove(r.IntentID)
		t.forget(r.IntentID)
		t.taken(r.IntentID)
		return
	}
	if k, ok := t.known[r.IntentID]; ok && !k.NextDueAt.Equal(r.NextDueAt) {
		// The store's due time wins over the cached one: an operator's
		// run now (or another instance's write) moved it.
		k.NextDueAt = r.NextDueAt
		t.known[r.IntentID] = k
	}
	t.schedule.Upsert(core.ScheduleEntry{IntentID: r.IntentID, DueAt: r.NextDueAt, Mode: r.Mode})
}

// remember caches an intent's state without its attempts, within bounds,
// and reports whether the cache holds it.
func (t *term) remember(i core.Intent) bool {
	if _, ok := t.known[i.IntentID]; ok {
		return true
	}
	if len(t.known) >= maxKnownIntents || t.knownBytes+len(i.Payload) > maxKnownPayloadBytes {
		return false
	}
	i.Attempts = nil
	t.known[i.IntentID] = i
	t.knownBytes += len(i.Payload)
	return true
}

// forget drops an intent from the cache and returns what was cached.
func (t *term) forget(intentID string) (core.Intent, bool) {
	i, ok := t.known[intentID]
	if ok {
		delete(t.known, intentID)
		t.knownBytes -= len(i.Payload)
	}
	return i, ok
}

// noteIntent schedules an intent this instance just created. An intent the
// schedule already knows, or one in flight, is left alone: a notification
// is older than anything the schedule learned since.
func (t *term) noteIntent(i core.Intent) {
	if _, busy := t.inFlight[i.IntentID]; busy || t.schedule.Contains(i.IntentID) || i.Status.Terminal() {
		return
	}
	t.schedule.Upsert(core.ScheduleEntry{IntentID: i.IntentID, DueAt: i.NextDueAt, Mode: i.Contract.Mode})
	t.remember(i)
}

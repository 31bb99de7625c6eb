package executor

import (
	"context"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// Reading ahead: after a rebuild (or a refresh that found intents created
// elsewhere) the known-intent cache does not hold the due intents, and
// reading each one before its attempt costs a store read per attempt. The
// scheduler instead asks one loader goroutine at a time to read the next due
// intents with one GetIntents, and caches those the cache may hold, so their
// attempts need no read of their own.

// loadResult is what the loader tells the scheduler.
type loadResult struct {
	intents []core.Intent
	err     error
}

// prefetchSize is how many of the next due intents one load reads: a few
// rounds of MaxInFlight attempts, so the load lands before they are due
// for dispatch, within bounds that keep one query small.
func (t *term) prefetchSize() int { return min(max(4*t.cfg.MaxInFlight, 64), 1024) }

// ready reports whether dispatching the intent needs no load: its state is
// cached, or a load found it cannot be (its attempt then reads it).
func (t *term) ready(intentID string) bool {
	if _, ok := t.known[intentID]; ok {
		return true
	}
	_, ok := t.unloadable[intentID]
	return ok
}

// taken forgets the read-ahead marks of an intent leaving the schedule: an
// attempt starts, or the intent ended. A load under way for it is then
// ignored for this intent, so an older state never replaces a newer one.
func (t *term) taken(intentID string) {
	delete(t.loading, intentID)
	delete(t.unloadable, intentID)
	t.sinceLoad++
}

// prefetch starts a load of the next due intents that are not ready, when
// no load is under way, the cache has room, and fewer than half of the next
// prefetchSize due intents are ready: often enough that attempts rarely wait
// for a load, rarely enough that the schedule's top is not walked on every
// dispatch.
func (t *term) prefetch(workCtx context.Context, now time.Time) {
	room := maxKnownIntents - len(t.known)
	if t.loading != nil || room <= 0 {
		return
	}
	n := t.prefetchSize()
	t.due = t.schedule.AppendDue(t.due[:0], now, n)
	ahead, want := 0, []string(nil)
	for _, id := range t.due {
		if t.ready(id) {
			if len(want) == 0 {
				ahead++
			}
			continue
		}
		if _, busy := t.inFlight[id]; !busy {
			want = append(want, id)
		}
	}
	t.sinceLoad = 0
	if len(want) == 0 || ahead >= n/2 {
		return
	}
	want = want[:min(len(want), room)]
	t.loading = make(map[string]bool, len(want))
	for _, id := range want {
		t.loading[id] = true
	}
	t.workers.Add(1)
	go func() {
		defer t.workers.Done()
		got, err := t.cfg.Store.GetIntents(workCtx, want)
		t.loaded <- loadResult{intents: got, err: err}
	}()
}

// applyLoad caches what a load read, for the intents still scheduled and not
// taken meanwhile. An intent the cache may not hold (see cacheable), has no
// room for, or that the store no longer has, is marked unloadable: its
// attempt reads it, as without reading ahead.
func (t *term) applyLoad(l loadResult) {
	loading := t.loading
	t.loading = nil
	if l.err != nil {
		// Not a sign of lost leadership by itself: the attempts read their
		// intents as without reading ahead, and their reads and fenced
		// writes decide. Loading them again could only fail again.
		t.log.Debug("prefetch_failed", "error", l.err.Error())
		l.intents = nil
	}
	for _, in := range l.intents {
		if !loading[in.IntentID] || !t.schedule.Contains(in.IntentID) {
			continue
		}
		delete(loading, in.IntentID)
		if !cacheable(in) || !t.remember(in) {
			t.unloadable[in.IntentID] = struct{}{}
		}
	}
	for id := range loading {
		if t.schedule.Contains(id) {
			t.unloadable[id] = struct{}{}
		}
	}
}

// cacheable reports whether an intent read from the store may enter the
// known-intent cache, which keeps no attempts: it is pending, and every
// attempt is finished, sent (so its attempt count is its number of tries)
// and not in doubt (the possiblyAccepted rule reads those).
func cacheable(in core.Intent) bool {
	if in.Status != core.StatusPending || len(in.Attempts) != in.AttemptCount {
		return false
	}
	for _, a := range in.Attempts {
		if !a.Finished() || !a.Sent || core.InDoubt(a) {
			return false
		}
	}
	return true
}

package watch

import (
	"context"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// IntentReader reads an intent as a waiting request answers it.
type IntentReader interface {
	GetIntent(ctx context.Context, intentID string) (core.Intent, error)
}

// AwaitFinal answers a request that asked to wait up to d for an intent it
// has just read or created (in): with the intent as soon as it is final, or
// as it stands once d has passed, ctx ends or the watcher closes. waited is
// false when the wait could not be registered (over the cap, not yet
// following the store, or closing): the request then answers at once with
// in, and says no preference was applied.
//
// The protocol is register, read again, wait, read again: a change
// committed after the request's first read is either in the second read or
// one the watcher reports to the registered waiter, so none is missed.
func (w *Watcher) AwaitFinal(ctx context.Context, in core.Intent, d time.Duration) (_ core.Intent, waited bool, _ error) {
	if in.Status.Terminal() {
		return in, true, nil
	}
	wt, ok := w.register(in.IntentID)
	if !ok {
		return in, false, nil
	}
	defer wt.Done()
	cur, err := w.cfg.Reader.GetIntent(ctx, in.IntentID)
	if err != nil || cur.Status.Terminal() {
		return cur, err == nil, err
	}
	wt.Wait(ctx, d)
	if ctx.Err() != nil {
		// The client went away: nobody reads the answer, and a read on a
		// cancelled context would only log a failure.
		return cur, true, nil
	}
	cur, err = w.cfg.Reader.GetIntent(ctx, in.IntentID)
	return cur, err == nil, err
}

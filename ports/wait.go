package ports

import (
	"context"
	"time"
)

// FinalWaiter lets a request wait until an intent is final without polling
// the store itself: one watcher per instance learns of changes from the
// store and wakes the registered waiters.
type FinalWaiter interface {
	// Register adds a waiter for intentID, or returns false when no more
	// waiters are admitted (over the cap, or shutting down): the request
	// then answers at once. Register before the read that decides whether
	// to wait, so that no change after that read can be missed.
	Register(intentID string) (WaitRegistration, bool)
}

// WaitRegistration is one registered waiter.
type WaitRegistration interface {
	// Wait blocks until the intent was seen final, d has passed, ctx ends
	// or the watcher shuts down, whichever is first.
	Wait(ctx context.Context, d time.Duration)
	// Done removes the waiter; it must always be called, and may be called
	// more than once.
	Done()
}

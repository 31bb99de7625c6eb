package ports

import (
	"context"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// FinalWaiter lets a request wait until an intent is final without polling
// the store itself: one watcher per instance learns of changes from the
// store and wakes the requests that wait.
type FinalWaiter interface {
	// AwaitFinal answers a request that asked to wait up to d for an intent
	// it has just read or created (in): the intent as soon as it is final,
	// or as it stands once d has passed, ctx ends or the waiter shuts down.
	// waited is false when no wait was admitted (over the cap, or shutting
	// down): the request then answers at once with in.
	AwaitFinal(ctx context.Context, in core.Intent, d time.Duration) (_ core.Intent, waited bool, _ error)
}

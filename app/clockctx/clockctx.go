// Package clockctx bounds contexts by a ports.Clock instead of the wall
// clock, so the executor's and the elector's time limits follow the same
// clock as the rest of their bookkeeping (and a fake clock in tests).
package clockctx

import (
	"context"
	"time"

	"github.com/submissionmanager/submission-manager/ports"
)

// WithTimeout is context.WithTimeout measured on clock: the context is
// cancelled with context.DeadlineExceeded once d has passed on clock. The
// returned cancel stops the watcher goroutine and waits for it, so no
// goroutine outlives the call it bounds.
func WithTimeout(parent context.Context, clock ports.Clock, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	timer := clock.NewTimer(d)
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-timer.C():
			cancel(context.DeadlineExceeded)
		case <-done:
		}
	}()
	return ctx, func() {
		timer.Stop()
		close(done)
		<-exited
		cancel(context.Canceled)
	}
}

// Outliving returns a context with parent's values that is not cancelled
// with parent: it is cancelled with context.DeadlineExceeded once d has
// passed on clock after parent was done. A write that must finish while
// its owner runs, however slow the store is, yet must not hold a shutdown
// for more than d, runs under it. The returned cancel stops the watcher
// goroutine and waits for it, as WithTimeout's does.
func Outliving(parent context.Context, clock ports.Clock, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-parent.Done():
		case <-done:
			return
		}
		timer := clock.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C():
			cancel(context.DeadlineExceeded)
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		<-exited
		cancel(context.Canceled)
	}
}

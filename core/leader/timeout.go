package leader

import (
	"context"
	"time"

	"github.com/submissionmanager/submission-manager/ports"
)

// withClockTimeout is context.WithTimeout measured on a ports.Clock, so the
// bound on a lease call follows the same clock as the lease bookkeeping (and
// a fake clock in tests). The returned cancel stops the watcher goroutine and
// waits for it, so no goroutine outlives the call it bounds.
func withClockTimeout(parent context.Context, clock ports.Clock, d time.Duration) (context.Context, context.CancelFunc) {
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

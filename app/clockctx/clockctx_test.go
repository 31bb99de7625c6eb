package clockctx_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/submissionmanager/submission-manager/app/clockctx"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestExpiresOnlyWhenTheClockSaysSo(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ctx, cancel := clockctx.WithTimeout(context.Background(), clock, time.Minute)
	defer cancel()
	if err := clock.WaitForTimer(t.Context(), clock.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(59 * time.Second)
	if ctx.Err() != nil {
		t.Fatalf("cancelled before the deadline: %v", ctx.Err())
	}
	clock.Advance(time.Second)
	<-ctx.Done()
	if cause := context.Cause(ctx); !errors.Is(cause, context.DeadlineExceeded) {
		t.Fatalf("cause %v, want context.DeadlineExceeded", cause)
	}
}

func TestCancelStopsTheWatcher(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ctx, cancel := clockctx.WithTimeout(context.Background(), clock, time.Hour)
	cancel() // returns only after the watcher goroutine exited (goleak checks)
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Fatalf("cause %v, want context.Canceled", context.Cause(ctx))
	}
}

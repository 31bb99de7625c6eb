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

func TestOutlivingRunsOnWhileItsParentRuns(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	parent, stop := context.WithCancel(context.Background())
	defer stop()
	ctx, cancel := clockctx.Outliving(parent, clock, time.Minute)
	defer cancel()
	clock.Advance(time.Hour) // no timer runs while the parent does
	if ctx.Err() != nil || len(clock.Timers()) != 0 {
		t.Fatalf("ended while its parent runs: %v, timers %v", ctx.Err(), clock.Timers())
	}
	stop()
	if err := clock.WaitForTimer(t.Context(), clock.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("cancelled with its parent: %v", ctx.Err())
	}
	clock.Advance(59 * time.Second)
	if ctx.Err() != nil {
		t.Fatalf("cancelled before d had passed after its parent ended: %v", ctx.Err())
	}
	clock.Advance(time.Second)
	<-ctx.Done()
	if cause := context.Cause(ctx); !errors.Is(cause, context.DeadlineExceeded) {
		t.Fatalf("cause %v, want context.DeadlineExceeded", cause)
	}
}

func TestOutlivingCancelStopsTheWatcher(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	parent, stop := context.WithCancel(context.Background())
	ctx, cancel := clockctx.Outliving(parent, clock, time.Hour)
	stop()
	if err := clock.WaitForTimer(t.Context(), clock.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	cancel() // returns only after the watcher goroutine exited (goleak checks)
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Fatalf("cause %v, want context.Canceled", context.Cause(ctx))
	}
}

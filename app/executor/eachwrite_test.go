package executor_test

import (
	"context"

	"github.com/submissionmanager/submission-manager/ports"
)

// startEach answers a batch of reservations item by item through start, so
// that a test store stepping into single reservations sees each one as the
// executor batches them.
func startEach(ctx context.Context, ps []ports.StartAttemptParams, start func(context.Context, ports.StartAttemptParams) error) []error {
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = start(ctx, p)
	}
	return errs
}

// finishEach is startEach for results.
func finishEach(ctx context.Context, ps []ports.FinishAttemptParams, finish func(context.Context, ports.FinishAttemptParams) error) []error {
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = finish(ctx, p)
	}
	return errs
}

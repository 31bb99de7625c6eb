package sqlserver

import (
	"context"
	"fmt"
	"math"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
)

// notRunnable explains why a conditional update of an intent matched no
// row: core.ErrIntentNotFound when there is no such intent, otherwise
// core.ErrIntentNotRunnable with the reason given.
func notRunnable(ctx context.Context, q *sqlserverdb.Queries, intentID, why string) error {
	n, err := q.IntentExists(ctx, intentID)
	if err != nil {
		return mapError(err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %q", core.ErrIntentNotFound, intentID)
	}
	return fmt.Errorf("%w: intent %q %s", core.ErrIntentNotRunnable, intentID, why)
}

// attemptNumber converts an attempt number to the int column type. A number
// below 1 is passed on: it matches no intent's count, so the write fails
// with core.ErrIntentNotRunnable after the fence check, like any other
// number that is not the intent's next.
func attemptNumber(n int) (int32, error) {
	if n < math.MinInt32+1 || n > math.MaxInt32 {
		return 0, fmt.Errorf("sqlserver: attempt number %d out of range", n)
	}
	return int32(n), nil
}

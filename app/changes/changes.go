// Package changes follows a store's change feed: the intents changed after
// a cursor, in (last_modified_at, intent_id) order. The leader's schedule
// refresh and every instance's watcher for waiting requests read it the
// same way, so the rule for paging it and moving the cursor lives here once.
package changes

import (
	"context"
	"time"

	"github.com/submissionmanager/submission-manager/ports"
)

// Feed is the part of the store a follower reads.
type Feed interface {
	ListChanged(ctx context.Context, p ports.ListChangedParams) ([]ports.ScheduleRow, error)
}

// Follow pages through the changes after *cursor and hands every row to
// note, in order. With a lookback it starts that far behind the cursor, to
// catch changes whose transactions committed after a later marker was read
// (re-reading is harmless: noting a row is idempotent). It advances *cursor
// to the last row read, exactly as the store returned it, and never moves
// it backwards.
func Follow(ctx context.Context, feed Feed, cursor *ports.ChangeCursor, lookback time.Duration, pageSize int, note func(ports.ScheduleRow)) error {
	from := *cursor
	if lookback > 0 && !from.LastModifiedAt.IsZero() {
		from = ports.ChangeCursor{LastModifiedAt: from.LastModifiedAt.Add(-lookback)}
	}
	for {
		rows, err := feed.ListChanged(ctx, ports.ListChangedParams{After: from, Limit: pageSize})
		if err != nil {
			return err
		}
		for _, r := range rows {
			note(r)
		}
		if len(rows) > 0 {
			last := rows[len(rows)-1]
			from = ports.ChangeCursor{LastModifiedAt: last.LastModifiedAt, IntentID: last.IntentID}
			if After(from, *cursor) {
				*cursor = from
			}
		}
		if len(rows) < pageSize {
			return nil
		}
	}
}

// After reports whether a comes after b in (LastModifiedAt, IntentID) order.
func After(a, b ports.ChangeCursor) bool {
	if c := a.LastModifiedAt.Compare(b.LastModifiedAt); c != 0 {
		return c > 0
	}
	return a.IntentID > b.IntentID
}

package sqlite

import (
	"context"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// ListPending pages through pending intents by intentId for a rebuild.
func (s *store) ListPending(ctx context.Context, p ports.ListPendingParams) ([]ports.ScheduleRow, error) {
	if p.Limit < 1 {
		return nil, fmt.Errorf("sqlite: list pending: limit %d is below 1", p.Limit)
	}
	rows, err := s.db.readQueries(ctx).ListPending(ctx, sqlitedb.ListPendingParams{
		AfterIntentID: p.AfterIntentID,
		RowLimit:      int64(p.Limit),
	})
	if err != nil {
		return nil, mapError("list pending", err)
	}
	out := make([]ports.ScheduleRow, len(rows))
	for i, r := range rows {
		out[i] = scheduleRow(r.IntentID, string(core.StatusPending), r.Mode, r.NextDueAt, r.LastModifiedAt)
	}
	return out, nil
}

// ListChanged pages through intents changed after the cursor, in cursor
// order. The cursor's time must be one this store returned: it is compared
// to the nanosecond.
func (s *store) ListChanged(ctx context.Context, p ports.ListChangedParams) ([]ports.ScheduleRow, error) {
	if p.Limit < 1 {
		return nil, fmt.Errorf("sqlite: list changed: limit %d is below 1", p.Limit)
	}
	rows, err := s.db.readQueries(ctx).ListChanged(ctx, sqlitedb.ListChangedParams{
		AfterModifiedAt: nanos(p.After.LastModifiedAt),
		AfterIntentID:   p.After.IntentID,
		RowLimit:        int64(p.Limit),
	})
	if err != nil {
		return nil, mapError("list changed", err)
	}
	out := make([]ports.ScheduleRow, len(rows))
	for i, r := range rows {
		out[i] = scheduleRow(r.IntentID, r.Status, r.Mode, r.NextDueAt, r.LastModifiedAt)
	}
	return out, nil
}

// LatestChange returns the cursor of the most recent change, or the zero
// cursor when the store has no intent.
func (s *store) LatestChange(ctx context.Context) (ports.ChangeCursor, error) {
	row, err := s.db.readQueries(ctx).LatestChange(ctx)
	if noRows(err) {
		return ports.ChangeCursor{}, nil
	}
	if err != nil {
		return ports.ChangeCursor{}, mapError("latest change", err)
	}
	return ports.ChangeCursor{LastModifiedAt: fromNanos(row.LastModifiedAt), IntentID: row.IntentID}, nil
}

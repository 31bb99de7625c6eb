package sqlserver

import (
	"context"
	"fmt"
	"math"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/ports"
)

// rowLimit converts a page size to the int32 the queries take.
func rowLimit(limit int) (int32, error) {
	if limit < 1 {
		return 0, fmt.Errorf("sqlserver: page limit %d, want at least 1", limit)
	}
	return int32(min(limit, math.MaxInt32)), nil
}

// ListPending returns a page of pending intents ordered by intentId, read
// through the filtered index of pending intents.
func (s *store) ListPending(ctx context.Context, p ports.ListPendingParams) ([]ports.ScheduleRow, error) {
	limit, err := rowLimit(p.Limit)
	if err != nil {
		return nil, err
	}
	rows, err := s.q.ListPending(ctx, sqlserverdb.ListPendingParams{
		AfterIntentID: p.AfterIntentID, RowLimit: limit})
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]ports.ScheduleRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, scheduleRow(r.IntentID, r.Status, r.Mode, r.NextDueAt, r.LastModifiedAt))
	}
	return out, nil
}

// ListChanged returns intents changed after the cursor, in cursor order.
//
// On SQL Server it reads inside a REPEATABLE READ transaction because that
// level always reads with locks, also in a database with
// READ_COMMITTED_SNAPSHOT on (Azure SQL's default). With row versioning the
// scan would step over a row whose change is not yet committed and return
// later, committed rows; the leader would advance its cursor past the
// uncommitted row's timestamp and never see that change. A locking scan
// waits for the writer instead. The shared locks last only for this one
// statement's transaction. Babelfish has no locking reads; see babelfish in
// fence.go.
func (s *store) ListChanged(ctx context.Context, p ports.ListChangedParams) ([]ports.ScheduleRow, error) {
	limit, err := rowLimit(p.Limit)
	if err != nil {
		return nil, err
	}
	var out []ports.ScheduleRow
	err = s.inTx(ctx, s.db.engine.lockingReadIsolation, func(q *sqlserverdb.Queries) error {
		rows, err := q.ListChanged(ctx, sqlserverdb.ListChangedParams{
			AfterModifiedAt: dbTime(p.After.LastModifiedAt),
			AfterIntentID:   p.After.IntentID,
			RowLimit:        limit,
		})
		if err != nil {
			return mapError(err)
		}
		out = make([]ports.ScheduleRow, 0, len(rows))
		for _, r := range rows {
			out = append(out, scheduleRow(r.IntentID, r.Status, r.Mode, r.NextDueAt, r.LastModifiedAt))
		}
		return nil
	})
	return out, err
}

// LatestChange returns the cursor of the most recent change, reading with
// locks for the same reason as ListChanged.
func (s *store) LatestChange(ctx context.Context) (ports.ChangeCursor, error) {
	var cursor ports.ChangeCursor
	err := s.inTx(ctx, s.db.engine.lockingReadIsolation, func(q *sqlserverdb.Queries) error {
		rows, err := q.LatestChange(ctx)
		if err != nil {
			return mapError(err)
		}
		if len(rows) > 0 {
			cursor = ports.ChangeCursor{LastModifiedAt: rows[0].LastModifiedAt.UTC(), IntentID: rows[0].IntentID}
		}
		return nil
	})
	return cursor, err
}

package sqlserver

import (
	"context"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.HistoryStore = (*store)(nil)

// History counts the window's rows per target and bucket in one statement
// (db/queries/sqlserver/history.sql): three index range seeks joined by
// UNION ALL, one round trip. Each row names its count: "submitted", an
// ended status, or "error". See ports.HistoryStore.
func (s *store) History(ctx context.Context, p ports.HistoryParams) ([]ports.HistoryRow, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	rows, err := s.q.History(ctx, sqlserverdb.HistoryParams{
		FromAt: p.From.UTC(), ToAt: p.To().UTC(), BucketSeconds: int32(p.Bucket.Seconds()),
	})
	if err != nil {
		return nil, mapError(err)
	}
	var tally ports.HistoryTally
	for _, r := range rows {
		c := tally.Counts(p.Start(int64(r.Bucket)), r.SubmissionTarget)
		switch r.Kind {
		case "submitted":
			c.Submitted += r.N
		case "error":
			c.AttemptErrors += r.N
		case string(core.StatusAccepted):
			c.Accepted += r.N
		case string(core.StatusRejected):
			c.Rejected += r.N
		case string(core.StatusExhausted):
			c.Exhausted += r.N
		}
	}
	return tally.Rows(), nil
}

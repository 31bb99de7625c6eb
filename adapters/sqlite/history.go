package sqlite

import (
	"context"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.HistoryStore = (*store)(nil)

// History counts the window's rows per target and bucket with three index
// range reads in one read transaction (db/queries/sqlite/history.sql). See
// ports.HistoryStore.
func (s *store) History(ctx context.Context, p ports.HistoryParams) ([]ports.HistoryRow, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var acc ports.HistoryTally
	from, bucket, to := nanos(p.From), int64(p.Bucket), nanos(p.To())
	err := s.db.read(ctx, "read history", func(ctx context.Context, q *sqlitedb.Queries) error {
		submitted, err := q.HistorySubmitted(ctx, sqlitedb.HistorySubmittedParams{FromNs: from, BucketNs: bucket, ToNs: to})
		if err != nil {
			return err
		}
		for _, r := range submitted {
			acc.Counts(p.Start(r.Bucket), r.SubmissionTarget).Submitted += r.N
		}
		ended, err := q.HistoryEnded(ctx, sqlitedb.HistoryEndedParams{FromNs: from, BucketNs: bucket, ToNs: to})
		if err != nil {
			return err
		}
		for _, r := range ended {
			c := acc.Counts(p.Start(r.Bucket), r.SubmissionTarget)
			switch core.IntentStatus(r.Status) {
			case core.StatusAccepted:
				c.Accepted += r.N
			case core.StatusRejected:
				c.Rejected += r.N
			case core.StatusExhausted:
				c.Exhausted += r.N
			}
		}
		failed, err := q.HistoryAttemptErrors(ctx, sqlitedb.HistoryAttemptErrorsParams{FromNs: from, BucketNs: bucket, ToNs: to})
		if err != nil {
			return err
		}
		for _, r := range failed {
			acc.Counts(p.Start(r.Bucket), r.SubmissionTarget).AttemptErrors += r.N
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return acc.Rows(), nil
}

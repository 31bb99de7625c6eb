package memstore

import (
	"context"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.HistoryStore = (*Store)(nil)

// History counts by walking every intent and attempt under the lock: the
// fake has no indexes to seek, and its tests hold few rows. See
// ports.HistoryStore for what each count takes its time from.
func (s *Store) History(ctx context.Context, p ports.HistoryParams) ([]ports.HistoryRow, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var tally ports.HistoryTally
	from, to := p.From, p.To()
	add := func(at time.Time, target string, f func(c *ports.HistoryCounts)) {
		if at.Before(from) || !at.Before(to) {
			return
		}
		f(tally.Counts(p.BucketOf(at), target))
	}
	s.mu.Lock()
	for _, in := range s.intents {
		add(in.CreatedAt, in.SubmissionTarget, func(c *ports.HistoryCounts) { c.Submitted++ })
		switch in.Status {
		case core.StatusAccepted:
			add(in.LastModifiedAt, in.SubmissionTarget, func(c *ports.HistoryCounts) { c.Accepted++ })
		case core.StatusRejected:
			add(in.LastModifiedAt, in.SubmissionTarget, func(c *ports.HistoryCounts) { c.Rejected++ })
		case core.StatusExhausted:
			add(in.LastModifiedAt, in.SubmissionTarget, func(c *ports.HistoryCounts) { c.Exhausted++ })
		}
		for _, a := range in.Attempts {
			if a.Finished() && a.Outcome == nil && a.Sent {
				add(a.FinishedAt, in.SubmissionTarget, func(c *ports.HistoryCounts) { c.AttemptErrors++ })
			}
		}
	}
	s.mu.Unlock()
	return tally.Rows(), nil
}

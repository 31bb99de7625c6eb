package sqlite

import (
	"context"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// CreateResubmission stores the resubmission and its link in one write. The
// single writer's transaction excludes every other writer, so the link read
// at its start still holds when the intent and the link are inserted: every
// verdict is decided before the first change.
func (s *store) CreateResubmission(ctx context.Context, intent core.Intent) (ports.CreateIntentResult, error) {
	from := intent.ResubmittedFrom
	if from == "" || intent.NextDueAt.IsZero() {
		return ports.CreateIntentResult{}, fmt.Errorf("sqlite: create resubmission %q: a resubmission names its original and is due", intent.IntentID)
	}
	params, err := insertIntentParams(intent)
	if err != nil {
		return ports.CreateIntentResult{}, err
	}
	var res ports.CreateIntentResult
	err = s.db.write(ctx, "create resubmission", func(ctx context.Context, q *writeTx) error {
		as, err := q.GetResubmissionOf(ctx, from)
		switch {
		case err == nil:
			existing, err := readIntent(ctx, q.Queries, as)
			res = ports.CreateIntentResult{Intent: existing}
			return err
		case !noRows(err):
			return err
		}
		original, err := q.GetIntent(ctx, from)
		if noRows(err) {
			return fmt.Errorf("%w: %q", core.ErrIntentNotFound, from)
		}
		if err != nil {
			return err
		}
		if !core.IntentStatus(original.Status).Terminal() {
			return fmt.Errorf("%w: %q is %s", core.ErrIntentNotEnded, from, original.Status)
		}
		row, inserted, err := q.insertIntent(ctx, params)
		if err != nil {
			return err
		}
		if inserted == 0 {
			return fmt.Errorf("%w: %q", core.ErrResubmissionIDTaken, intent.IntentID)
		}
		if err := q.InsertResubmission(ctx, sqlitedb.InsertResubmissionParams{
			IntentID: from, ResubmittedAs: intent.IntentID, CreatedAt: row.LastModifiedAt,
		}); err != nil {
			return err
		}
		created, err := readIntent(ctx, q.Queries, intent.IntentID)
		res = ports.CreateIntentResult{Intent: created, Created: true}
		return err
	})
	return res, err
}

// ResubmissionLinks reads the links of the given intents from one snapshot.
func (s *store) ResubmissionLinks(ctx context.Context, intentIDs []string) (map[string]ports.ResubmissionLinks, error) {
	out := make(map[string]ports.ResubmissionLinks)
	if len(intentIDs) == 0 {
		return out, nil
	}
	err := s.db.read(ctx, "resubmission links", func(ctx context.Context, q *sqlitedb.Queries) error {
		from, err := q.ListResubmissionsFrom(ctx, intentIDs)
		if err != nil {
			return err
		}
		for _, r := range from {
			l := out[r.IntentID]
			l.As = r.ResubmittedAs
			out[r.IntentID] = l
		}
		as, err := q.ListResubmissionsAs(ctx, intentIDs)
		if err != nil {
			return err
		}
		for _, r := range as {
			l := out[r.ResubmittedAs]
			l.From = r.IntentID
			out[r.ResubmittedAs] = l
		}
		return nil
	})
	return out, err
}

// CountIntents counts intents per target and status.
func (s *store) CountIntents(ctx context.Context) ([]ports.IntentCount, error) {
	rows, err := s.db.readQueries(ctx).CountIntentsByTargetStatus(ctx)
	if err != nil {
		return nil, mapError("count intents", err)
	}
	out := make([]ports.IntentCount, len(rows))
	for i, r := range rows {
		out[i] = ports.IntentCount{SubmissionTarget: r.SubmissionTarget, Status: core.IntentStatus(r.Status), Count: r.IntentCount}
	}
	return out, nil
}

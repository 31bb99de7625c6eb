package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// CreateResubmission inserts the resubmission and its link in one
// transaction. Concurrent resubmissions of one original (on any instance)
// all pass the first read; the primary keys decide: the loser's insert of
// the intent or the link fails as a duplicate, its transaction rolls back,
// and it reads the winner's link afterwards.
func (s *store) CreateResubmission(ctx context.Context, intent core.Intent) (ports.CreateIntentResult, error) {
	from := intent.ResubmittedFrom
	if from == "" {
		return ports.CreateIntentResult{}, fmt.Errorf("sqlserver: create resubmission %q: a resubmission names its original", intent.IntentID)
	}
	params, err := insertIntentParams(intent)
	if err != nil {
		return ports.CreateIntentResult{}, err
	}
	var res ports.CreateIntentResult
	err = s.inTx(ctx, sql.LevelReadCommitted, func(q *sqlserverdb.Queries) error {
		if existing, found, err := s.resubmissionOf(ctx, q, from); err != nil || found {
			res = ports.CreateIntentResult{Intent: existing}
			return err
		}
		original, found, err := s.readIntent(ctx, q, from)
		switch {
		case err != nil:
			return err
		case !found || original.IntentID != from:
			return fmt.Errorf("%w: %q", core.ErrIntentNotFound, from)
		case !original.Status.Terminal():
			return fmt.Errorf("%w: %q is %s", core.ErrIntentNotEnded, from, original.Status)
		}
		if err := q.InsertIntent(ctx, params); err != nil {
			return mapError(err)
		}
		if err := q.InsertResubmission(ctx, sqlserverdb.InsertResubmissionParams{IntentID: from, ResubmittedAs: intent.IntentID}); err != nil {
			return mapError(err)
		}
		created, _, err := s.readIntent(ctx, q, intent.IntentID)
		res = ports.CreateIntentResult{Intent: created, Created: true}
		return err
	})
	if !errors.Is(err, errDuplicateKey) {
		return res, err
	}
	// A duplicate: either another resubmission of the original won, or the
	// new intentId names some other intent.
	existing, found, err := s.resubmissionOf(ctx, s.q, from)
	switch {
	case err != nil:
		return ports.CreateIntentResult{}, err
	case found:
		return ports.CreateIntentResult{Intent: existing}, nil
	default:
		return ports.CreateIntentResult{}, fmt.Errorf("%w: %q", core.ErrResubmissionIDTaken, intent.IntentID)
	}
}

// resubmissionOf reads the intent that resubmitted intentID, if any.
func (s *store) resubmissionOf(ctx context.Context, q *sqlserverdb.Queries, intentID string) (core.Intent, bool, error) {
	as, err := q.GetResubmissionOf(ctx, intentID)
	if errors.Is(err, sql.ErrNoRows) {
		return core.Intent{}, false, nil
	}
	if err != nil {
		return core.Intent{}, false, mapError(err)
	}
	return s.readIntent(ctx, q, as)
}

// ResubmissionLinks reads the links of a page of intents in one round trip.
func (s *store) ResubmissionLinks(ctx context.Context, intentIDs []string) (map[string]ports.ResubmissionLinks, error) {
	out := make(map[string]ports.ResubmissionLinks)
	if len(intentIDs) == 0 {
		return out, nil
	}
	links, err := s.db.resubmissionLinksOf(ctx, intentIDs)
	if err != nil {
		return nil, err
	}
	asked := make(map[string]bool, len(intentIDs))
	for _, id := range intentIDs {
		asked[id] = true
	}
	for _, link := range links {
		from, as := link[0], link[1]
		if asked[from] {
			l := out[from]
			l.As = as
			out[from] = l
		}
		if asked[as] {
			l := out[as]
			l.From = from
			out[as] = l
		}
	}
	return out, nil
}

// CountIntents counts intents per target and status.
func (s *store) CountIntents(ctx context.Context) ([]ports.IntentCount, error) {
	rows, err := s.q.CountIntentsByTargetStatus(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]ports.IntentCount, len(rows))
	for i, r := range rows {
		out[i] = ports.IntentCount{SubmissionTarget: r.SubmissionTarget, Status: core.IntentStatus(r.Status), Count: r.IntentCount}
	}
	return out, nil
}

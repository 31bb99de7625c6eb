package sqlserver

import (
	"context"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// isPossiblyAccepted reads one intent's flag through q (a transaction's, in
// a resubmission). Only an intent with at least two attempts can be
// flagged (an attempt in doubt, then a duplicate), so a younger intent
// costs no round trip.
func isPossiblyAccepted(ctx context.Context, q *sqlserverdb.Queries, intent core.Intent) (bool, error) {
	if intent.AttemptCount < 2 {
		return false, nil
	}
	flagged, err := q.IsPossiblyAccepted(ctx, intent.IntentID)
	return flagged, mapError(err)
}

// listPossiblyAccepted is the listing filtered on the flag, with the other
// filters applied in the same query.
func listPossiblyAccepted(ctx context.Context, q *sqlserverdb.Queries, p ports.ListIntentsParams, p2 sqlserverdb.ListPossiblyAcceptedParams) ([]intentRow, error) {
	p2.Status, p2.SubmissionTarget = string(p.Status), p.SubmissionTarget
	got, err := q.ListPossiblyAccepted(ctx, p2)
	if err != nil {
		return nil, mapError(err)
	}
	rows := make([]intentRow, len(got))
	for i, r := range got {
		rows[i] = intentRow(r)
	}
	return rows, nil
}

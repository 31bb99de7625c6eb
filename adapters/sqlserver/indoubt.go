package sqlserver

import (
	"context"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/ports"
)

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

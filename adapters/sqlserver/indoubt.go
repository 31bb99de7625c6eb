package sqlserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// attachPossiblyAccepted sets PossiblyAccepted on those of the intents the
// store flagged (migration 00007). The flag is read with its own query so
// that the listing queries stay as they are. Only an intent with at least
// two attempts can be flagged (an attempt in doubt, then a duplicate), so
// reads of younger intents, the executor's common case, cost no round
// trip.
func attachPossiblyAccepted(ctx context.Context, q *sqlserverdb.Queries, intents []core.Intent) error {
	var ids []string
	for _, in := range intents {
		if in.AttemptCount >= 2 {
			ids = append(ids, in.IntentID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return fmt.Errorf("sqlserver: encode intent ids: %w", err)
	}
	flagged, err := q.PossiblyAcceptedOf(ctx, string(idsJSON))
	if err != nil {
		return mapError(err)
	}
	set := make(map[string]bool, len(flagged))
	for _, id := range flagged {
		set[id] = true
	}
	for i := range intents {
		intents[i].PossiblyAccepted = set[intents[i].IntentID]
	}
	return nil
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

package sqlserver

import (
	"context"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
)

// attachPossiblyAccepted sets PossiblyAccepted on those of the intents the
// store flagged (migration 00007). The flag is read with its own query so
// that the listing queries stay as they are. Only an intent with at least
// two attempts can be flagged (an attempt in doubt, then a duplicate), so
// reads of younger intents, the executor's common case, cost no round
// trip.
func (db *DB) attachPossiblyAccepted(ctx context.Context, intents []core.Intent) error {
	var ids []string
	for _, in := range intents {
		if in.AttemptCount >= 2 {
			ids = append(ids, in.IntentID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	flagged, err := db.possiblyAcceptedOf(ctx, ids)
	if err != nil {
		return err
	}
	for i := range intents {
		intents[i].PossiblyAccepted = flagged[intents[i].IntentID]
	}
	return nil
}

// isPossiblyAccepted is attachPossiblyAccepted for one intent, read through
// q (which may be a transaction's).
func isPossiblyAccepted(ctx context.Context, q *sqlserverdb.Queries, intent core.Intent) (bool, error) {
	if intent.AttemptCount < 2 {
		return false, nil
	}
	flagged, err := q.IsPossiblyAccepted(ctx, intent.IntentID)
	return flagged, mapError(err)
}

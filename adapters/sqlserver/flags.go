package sqlserver

import (
	"context"
	"database/sql"
	"errors"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
)

// The facts kept beside an intent's status that the gateway may have its
// message: possiblyAccepted (migration 00007), and an acceptance after the
// deadline with its message id (migration 00011). They are read with their
// own query so that the listing queries stay as they are, and only for
// intents that can have them, so reads of the others (the executor's
// pending intents, most listings) cost no round trip.

// mayHaveFlags reports whether an intent, as its row reads, can carry a
// fact: a possibly accepted intent has at least two attempts (an attempt
// in doubt, then a duplicate), and an acceptance after the deadline
// exhausted its intent by the deadline on an attempt.
func mayHaveFlags(in core.Intent) bool {
	return in.AttemptCount >= 2 ||
		(in.AttemptCount >= 1 && in.Status == core.StatusExhausted && in.ExhaustedReason == core.ExhaustedDeadlineExceeded)
}

// withFlags sets an intent's facts from their columns.
func withFlags(in core.Intent, f sqlserverdb.IntentFlagsRow) core.Intent {
	in.PossiblyAccepted = f.PossiblyAccepted
	in.AcceptedAfterDeadline = f.AcceptedAfterDeadline
	in.AcceptedMessageID = f.AcceptedMessageID.String
	return in
}

// attachFlags sets the facts on those of the intents the store keeps any
// for, in one round trip for all of them.
func (db *DB) attachFlags(ctx context.Context, intents []core.Intent) error {
	var ids []string
	for _, in := range intents {
		if mayHaveFlags(in) {
			ids = append(ids, in.IntentID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	flags, err := db.intentFlagsOf(ctx, ids)
	if err != nil {
		return err
	}
	for i := range intents {
		intents[i] = withFlags(intents[i], flags[intents[i].IntentID])
	}
	return nil
}

// readFlags is attachFlags for one intent, read through q (which may be a
// transaction's).
func readFlags(ctx context.Context, q *sqlserverdb.Queries, in core.Intent) (core.Intent, error) {
	if !mayHaveFlags(in) {
		return in, nil
	}
	f, err := q.IntentFlags(ctx, in.IntentID)
	if errors.Is(err, sql.ErrNoRows) {
		return in, nil
	}
	if err != nil {
		return core.Intent{}, mapError(err)
	}
	return withFlags(in, f), nil
}

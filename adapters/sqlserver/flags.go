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
// deadline with its message id (migration 00011). The reads of intents
// read them with the row (detailedIntentColumns); the reads inside a
// transaction, written by sqlc, read them with their own query, and only
// for intents that can have them.

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

// readFlags reads the facts of one intent read without them, through q (a
// transaction's, in a resubmission or an intervention).
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

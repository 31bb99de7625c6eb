package sqlserver

import (
	"context"
	"database/sql"
	"errors"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
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

// listAcceptedAfterDeadline is the listing filtered on an acceptance after
// the deadline, with the other filters (possiblyAccepted's among them)
// applied in the same query.
func listAcceptedAfterDeadline(ctx context.Context, q *sqlserverdb.Queries, p ports.ListIntentsParams, p2 sqlserverdb.ListAcceptedAfterDeadlineParams) ([]intentRow, error) {
	p2.Status, p2.SubmissionTarget, p2.PossiblyAcceptedOnly = string(p.Status), p.SubmissionTarget, p.PossiblyAccepted
	got, err := q.ListAcceptedAfterDeadline(ctx, p2)
	if err != nil {
		return nil, mapError(err)
	}
	rows := make([]intentRow, len(got))
	for i, r := range got {
		rows[i] = intentRow(r)
	}
	return rows, nil
}

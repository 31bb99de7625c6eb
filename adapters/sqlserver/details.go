package sqlserver

import (
	"database/sql"
	"errors"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
)

// An intent travels with its details: its attempts and the facts kept
// beside its status (flags.go). Every read that returns intents
// (GetIntent, the repeat answered by CreateIntent, GetIntents, a batch's
// read-back, a listing page) reads the facts with the row and asks for the
// attempts in the same request, as a second result set (a listing page in
// a second request), so a read costs one round trip whatever the intent's
// history.

// intentColumns are the columns of intentRow, in its field order.
const intentColumns = `intent_id, submission_target, payload, contract, status, created_at,
       next_due_at, attempt_count, final_outcome_status, final_outcome_reason,
       final_message_id, exhausted_reason, last_modified_at, not_before, trace_parent`

// intentRowFields are the scan destinations of intentColumns in r, the one
// place that pairs the columns with intentRow's fields.
func intentRowFields(r *intentRow) []any {
	return []any{&r.IntentID, &r.SubmissionTarget, &r.Payload, &r.Contract, &r.Status, &r.CreatedAt,
		&r.NextDueAt, &r.AttemptCount, &r.FinalOutcomeStatus, &r.FinalOutcomeReason,
		&r.FinalMessageID, &r.ExhaustedReason, &r.LastModifiedAt, &r.NotBefore, &r.TraceParent}
}

// detailedIntentColumns are intentColumns and the facts (flags.go), which
// detailedRowFields pairs with their fields.
const detailedIntentColumns = intentColumns + ", possibly_accepted, accepted_after_deadline, accepted_message_id"

// detailedRow is one row of detailedIntentColumns.
type detailedRow struct {
	intentRow
	flags sqlserverdb.IntentFlagsRow
}

// detailedRowFields are the scan destinations of detailedIntentColumns in r.
func detailedRowFields(r *detailedRow) []any {
	return append(intentRowFields(&r.intentRow),
		&r.flags.PossiblyAccepted, &r.flags.AcceptedAfterDeadline, &r.flags.AcceptedMessageID)
}

// intent converts the row to its intent with its facts.
func (r detailedRow) intent() (core.Intent, error) {
	in, err := intentFromRow(r.intentRow)
	return withFlags(in, r.flags), err
}

// attemptColumns are the columns of an attempt as every read of attempts
// returns them: its intentId, then attemptRow's fields in order.
const attemptColumns = `intent_id, attempt_number, started_at, finished_at, outcome_status,
       outcome_reason, message_id, error, sent, holder_id, lease_epoch`

// attemptsOfSQL reads the attempts of the intents where selects, each
// intent's in order.
func attemptsOfSQL(where string) string {
	return "SELECT " + attemptColumns + "\nFROM submission_attempts\nWHERE " + where + "\nORDER BY intent_id, attempt_number"
}

// scanIntentRow reads one row of intentColumns.
func scanIntentRow(rows *sql.Rows) (intentRow, error) {
	var r intentRow
	err := rows.Scan(intentRowFields(&r)...)
	return r, err
}

// readDetailedIntents reads the current result set as intents
// (detailedIntentColumns) and the next as their attempts
// (attemptColumns), and returns the intents with their attempts.
func readDetailedIntents(rows *sql.Rows) ([]core.Intent, error) {
	var intents []core.Intent
	for rows.Next() {
		var r detailedRow
		if err := rows.Scan(detailedRowFields(&r)...); err != nil {
			return nil, err
		}
		in, err := r.intent()
		if err != nil {
			return nil, err
		}
		intents = append(intents, in)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if !rows.NextResultSet() {
		return nil, errors.Join(rows.Err(), errors.New("sqlserver: the read of intents returned no attempts"))
	}
	byIntent := make(map[string][]attemptRow, len(intents))
	if err := readAttempts(rows, byIntent); err != nil {
		return nil, err
	}
	for i := range intents {
		intents[i] = withAttempts(intents[i], byIntent[intents[i].IntentID])
	}
	return intents, nil
}

// readAttempts reads the current result set (attemptColumns) into
// byIntent, each intent's attempts in the order read.
func readAttempts(rows *sql.Rows, byIntent map[string][]attemptRow) error {
	for rows.Next() {
		var (
			id string
			r  attemptRow
		)
		if err := rows.Scan(&id, &r.AttemptNumber, &r.StartedAt, &r.FinishedAt, &r.OutcomeStatus,
			&r.OutcomeReason, &r.MessageID, &r.Error, &r.Sent, &r.HolderID, &r.LeaseEpoch); err != nil {
			return err
		}
		byIntent[id] = append(byIntent[id], r)
	}
	return rows.Err()
}

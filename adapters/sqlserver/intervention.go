package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.InterventionStore = (*store)(nil)

// An operator's action on a pending intent is one T-SQL batch, one round
// trip: in one transaction it updates the intent row under every condition
// the action has, inserts the event when that update changed the row, and
// answers with whether it did and the intent's status, from which the
// verdict is read (no row: no such intent).
//
// A cancel must never apply while an attempt is open, on SQL Server under
// locking READ COMMITTED or READ_COMMITTED_SNAPSHOT and on Babelfish (whose
// UPDATE, as PostgreSQL's, waits for a row another transaction changed and
// then judges the new row version by the target table's own columns only).
// So the batch first reads the intent's attempt count, and the update
// requires both that count and that attempt (the latest) to be absent or
// finished. Every StartAttempts counts its attempt on the intent row and
// inserts its attempt row in one transaction, so: a reservation committed
// before the read is seen with its attempt (an attempt row committed
// before a statement starts is visible to it under every isolation
// above); one committed after the read has moved the count, and the update,
// which locks the row and judges its current count, changes nothing; and
// one that comes after the update waits for the row and finds the intent
// exhausted. An update that found the latest attempt open while its
// FinishAttempts was committing answers "in flight", which it was.
//
// Comparisons of intentIds add DATALENGTH, because SQL Server finds "a"
// equal to "a " (padded comparison), and the action must touch only the
// intent asked for. The id travels as nvarchar(4000): a cast to the
// column's width could cut a longer id down to another intent's. The
// event is numbered one past the intent's last; the update's lock on the
// intent row serialises the events of one intent.

// interventionBatch is the batch of one action: $1 is the intentId, $2 to
// $4 the actor's surface, role and session tag, set the update (whose
// WHERE may use @intent_id, @count and @now), action the event's action.
// It sets its options back last: SQL Server ends a parameterised batch's
// SET options with it, but Babelfish keeps them for the session, whose
// later execs would then count no rows (NOCOUNT), and the query pool keeps
// its sessions unless a use failed (keepsession.go).
func interventionBatch(set, where string, action core.IntentAction) string {
	return `SET NOCOUNT ON;
SET XACT_ABORT ON;
DECLARE @intent_id nvarchar(4000) = CAST($1 AS nvarchar(4000)), @count int, @now datetime2(7), @applied int;
BEGIN TRANSACTION;
SELECT @count = i.attempt_count FROM submission_intents AS i
WHERE i.intent_id = @intent_id AND DATALENGTH(i.intent_id) = DATALENGTH(@intent_id) AND i.status = 'pending';
SET @now = SYSUTCDATETIME();
UPDATE submission_intents
SET ` + set + `,
    last_modified_at = CASE WHEN @now > submission_intents.last_modified_at THEN @now
                            ELSE DATEADD(nanosecond, 100, submission_intents.last_modified_at) END
WHERE submission_intents.intent_id = @intent_id
  AND DATALENGTH(submission_intents.intent_id) = DATALENGTH(@intent_id)
  AND submission_intents.status = 'pending'
  AND ` + where + `;
SET @applied = @@ROWCOUNT;
IF @applied = 1
    INSERT INTO submission_intent_events (intent_id, event_number, occurred_at, action, surface, role, session_tag)
    SELECT @intent_id, COALESCE(MAX(e.event_number), 0) + 1, @now, '` + string(action) + `',
           CAST($2 AS varchar(16)), CAST($3 AS varchar(16)), CAST($4 AS varchar(12))
    FROM submission_intent_events AS e
    WHERE e.intent_id = @intent_id AND DATALENGTH(e.intent_id) = DATALENGTH(@intent_id);
COMMIT TRANSACTION;
SELECT @applied, i.status, i.exhausted_reason FROM submission_intents AS i
WHERE i.intent_id = @intent_id AND DATALENGTH(i.intent_id) = DATALENGTH(@intent_id);
SET XACT_ABORT OFF;
SET NOCOUNT OFF;`
}

// cancelIntentSQL ends the intent as cancelled while it is pending at the
// count read first and that attempt, its latest, is absent or finished.
var cancelIntentSQL = interventionBatch(
	`status = 'exhausted', exhausted_reason = 'cancelled', next_due_at = NULL`,
	`submission_intents.attempt_count = @count
  AND NOT EXISTS (SELECT 1 FROM submission_attempts AS a
                  WHERE a.intent_id = @intent_id AND a.attempt_number = @count AND a.finished_at IS NULL)`,
	core.ActionCancel)

// runIntentNowSQL makes the pending intent due at the batch's now when it
// is due later.
var runIntentNowSQL = interventionBatch(
	`next_due_at = @now`,
	`submission_intents.next_due_at > @now`,
	core.ActionRunNow)

// CancelIntent cancels in one round trip (see above and
// ports.InterventionStore).
func (s *store) CancelIntent(ctx context.Context, p ports.IntentActionParams) (bool, error) {
	return s.intervene(ctx, "cancel intent", cancelIntentSQL, p, func(status core.IntentStatus, reason core.ExhaustedReason) error {
		return ports.CancelVerdict(p.IntentID, status, reason)
	})
}

// RunIntentNow makes the intent due now in one round trip (see above and
// ports.InterventionStore).
func (s *store) RunIntentNow(ctx context.Context, p ports.IntentActionParams) (bool, error) {
	return s.intervene(ctx, "run intent now", runIntentNowSQL, p, func(status core.IntentStatus, _ core.ExhaustedReason) error {
		return ports.RunNowVerdict(p.IntentID, status)
	})
}

// intervene sends one action's batch and reads its answer.
func (s *store) intervene(ctx context.Context, op, batch string, p ports.IntentActionParams,
	verdict func(core.IntentStatus, core.ExhaustedReason) error) (bool, error) {
	if err := p.Validate(); err != nil {
		return false, fmt.Errorf("sqlserver: %w", err)
	}
	if utf8.RuneCountInString(p.IntentID) > core.MaxIntentIDLength {
		return false, fmt.Errorf("%w: %q", core.ErrIntentNotFound, p.IntentID)
	}
	var (
		applied sql.NullInt32
		status  string
		reason  sql.NullString
		found   bool
	)
	err := s.db.retryDeadlocks(ctx, func() error {
		found = false
		row := s.pool.QueryRowContext(ctx, batch, p.IntentID, p.Actor.Surface, p.Actor.Role.String(), nullString(p.Actor.Session))
		switch err := row.Scan(&applied, &status, &reason); {
		case errors.Is(err, sql.ErrNoRows):
			return nil
		case err != nil:
			return mapError(err)
		}
		found = true
		return nil
	})
	switch {
	case err != nil:
		return false, fmt.Errorf("sqlserver: %s: %w", op, err)
	case !found:
		return false, fmt.Errorf("%w: %q", core.ErrIntentNotFound, p.IntentID)
	case applied.Int32 == 1:
		return true, nil
	}
	return false, verdict(core.IntentStatus(status), core.ExhaustedReason(reason.String))
}

// IntentEvents reads the intent's events, oldest first.
func (s *store) IntentEvents(ctx context.Context, intentID string) ([]core.IntentEvent, error) {
	rows, err := s.q.ListIntentEvents(ctx, intentID)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]core.IntentEvent, 0, len(rows))
	for _, r := range rows {
		if r.IntentID != intentID {
			continue // equal only by SQL Server's padded comparison
		}
		role, ok := core.RoleNamed(r.Role)
		if !ok {
			return nil, fmt.Errorf("sqlserver: intent events of %q: %w: unknown role %q", intentID, core.ErrStoreUnavailable, r.Role)
		}
		out = append(out, core.IntentEvent{Number: int(r.EventNumber), At: r.OccurredAt.UTC(), Action: core.IntentAction(r.Action),
			Actor: core.Actor{Surface: r.Surface, Role: role, Session: r.SessionTag.String}})
	}
	return out, nil
}

-- Operator actions on pending intents (cancel, run now) and the intents'
-- history of them, in the embedded SQLite store. Each action is one write
-- of the single writer: the update of the intent carries every condition
-- (it decides), and the event follows only when it changed the row.

-- name: CancelIntent :execrows
-- Ends a pending intent with no attempt open: its latest attempt (number
-- attempt_count) is absent or finished. StartAttempt counts the attempt and
-- inserts its row in the same transaction, so the two exclude each other.
UPDATE submission_intents
SET status = 'exhausted',
    exhausted_reason = 'cancelled',
    next_due_at = NULL,
    last_modified_at = sqlc.arg(last_modified_at)
WHERE submission_intents.intent_id = sqlc.arg(intent_id)
  AND submission_intents.status = 'pending'
  AND NOT EXISTS (
    SELECT 1 FROM submission_attempts AS a
    WHERE a.intent_id = submission_intents.intent_id
      AND a.attempt_number = submission_intents.attempt_count AND a.finished_at IS NULL);

-- name: RunIntentNow :execrows
-- Makes a pending intent that is due later due at the write's stamp (which
-- is also its change marker, so every refresh sees it).
UPDATE submission_intents
SET next_due_at = sqlc.arg(now),
    last_modified_at = sqlc.arg(now)
WHERE intent_id = sqlc.arg(intent_id)
  AND status = 'pending'
  AND next_due_at > sqlc.arg(now);

-- name: InsertIntentEvent :exec
-- Runs in the write that changed the intent: numbered one past the
-- intent's last event.
INSERT INTO submission_intent_events (intent_id, event_number, occurred_at, action, surface, role, session_tag)
SELECT sqlc.arg(intent_id), COALESCE(MAX(event_number), 0) + 1, sqlc.arg(occurred_at),
       sqlc.arg(action), sqlc.arg(surface), sqlc.arg(role), sqlc.narg(session_tag)
FROM submission_intent_events
WHERE intent_id = sqlc.arg(intent_id);

-- name: IntentActionState :one
-- Why an action changed nothing: the intent's status and exhausted reason,
-- and whether its latest attempt is open.
SELECT i.status, i.exhausted_reason,
       EXISTS (
         SELECT 1 FROM submission_attempts AS a
         WHERE a.intent_id = i.intent_id
           AND a.attempt_number = i.attempt_count AND a.finished_at IS NULL) AS attempt_open
FROM submission_intents AS i
WHERE i.intent_id = sqlc.arg(intent_id);

-- name: ListIntentEvents :many
SELECT event_number, occurred_at, action, surface, role, session_tag
FROM submission_intent_events
WHERE intent_id = sqlc.arg(intent_id)
ORDER BY event_number;

-- name: InsertIntent :exec
-- last_modified_at is SYSUTCDATETIME() in the same statement as the insert
-- (and as every update below). Time parameters are passed in UTC and cast
-- to datetime2(7): go-mssqldb sends time.Time as datetimeoffset, and where
-- such a parameter meets a datetime2 column in a predicate, datatype
-- precedence would convert the column (a scan) instead of the parameter.
INSERT INTO submission_intents (
    intent_id, submission_target, payload, contract, gateway_type, mode,
    status, created_at, next_due_at, attempt_count, last_modified_at, not_before, trace_parent
) VALUES (
    sqlc.arg(intent_id),
    sqlc.arg(submission_target),
    sqlc.arg(payload),
    sqlc.arg(contract),
    sqlc.arg(gateway_type),
    sqlc.arg(mode),
    'pending',
    CAST(sqlc.arg(created_at) AS datetime2(7)),
    CAST(sqlc.arg(next_due_at) AS datetime2(7)),
    0,
    SYSUTCDATETIME(),
    CAST(sqlc.narg(not_before) AS datetime2(7)),
    sqlc.narg(trace_parent)
);

-- name: GetIntent :one
SELECT intent_id, submission_target, payload, contract, status, created_at,
       next_due_at, attempt_count, final_outcome_status, final_outcome_reason,
       final_message_id, exhausted_reason, last_modified_at, not_before, trace_parent
FROM submission_intents
WHERE intent_id = sqlc.arg(intent_id);

-- The intents listing (ListIntents) is written by adapters/sqlserver/listing.go:
-- its filters combine freely and it pages both ways.

-- name: ListPending :many
-- The literal 'pending' (not a parameter) lets the optimizer match the
-- filtered index ix_submission_intents_pending.
SELECT intent_id, status, mode, next_due_at, last_modified_at
FROM submission_intents
WHERE status = 'pending'
  AND intent_id > sqlc.arg(after_intent_id)
ORDER BY intent_id
OFFSET 0 ROWS FETCH NEXT sqlc.arg(row_limit) ROWS ONLY;

-- name: ListChanged :many
-- (last_modified_at, intent_id) > cursor, written with a seekable first
-- conjunct, so rows sharing a timestamp are never skipped.
SELECT intent_id, status, mode, next_due_at, last_modified_at
FROM submission_intents
WHERE last_modified_at >= CAST(sqlc.arg(after_modified_at) AS datetime2(7))
  AND (last_modified_at > CAST(sqlc.arg(after_modified_at) AS datetime2(7))
       OR intent_id > sqlc.arg(after_intent_id))
ORDER BY last_modified_at, intent_id
OFFSET 0 ROWS FETCH NEXT sqlc.arg(row_limit) ROWS ONLY;

-- name: LatestChange :many
SELECT last_modified_at, intent_id
FROM submission_intents
ORDER BY last_modified_at DESC, intent_id DESC
OFFSET 0 ROWS FETCH NEXT 1 ROWS ONLY;

-- name: IntentExists :one
-- Tells a missing intent from one that moved on, after a conditional
-- update matched no row.
SELECT COUNT(*) AS found
FROM submission_intents
WHERE intent_id = sqlc.arg(intent_id);

-- name: RescheduleIntent :execrows
-- A deferral (the gateway's breaker is open, or it is paused): moves a
-- pending intent's next due time, or exhausts it with deadline_exceeded,
-- without an attempt row. It runs after the fence check in the fenced
-- transaction, and applies only while the intent is pending at the attempt
-- count the executor saw with no attempt open. last_modified_at moves
-- strictly forward, as in StartAttempt.
UPDATE submission_intents
SET status = CAST(sqlc.arg(status) AS varchar(16)),
    next_due_at = sqlc.narg(next_due_at),
    exhausted_reason = CAST(sqlc.narg(exhausted_reason) AS varchar(32)),
    last_modified_at = CASE WHEN clock.now > last_modified_at THEN clock.now
                            ELSE DATEADD(nanosecond, 100, last_modified_at) END
FROM (SELECT SYSUTCDATETIME() AS now) AS clock
WHERE submission_intents.intent_id = sqlc.arg(intent_id)
  AND submission_intents.status = 'pending'
  AND submission_intents.attempt_count = CAST(sqlc.arg(attempt_count) AS int)
  AND NOT EXISTS (
    SELECT 1 FROM submission_attempts AS a
    WHERE a.intent_id = submission_intents.intent_id
      AND a.attempt_number = submission_intents.attempt_count
      AND a.finished_at IS NULL);

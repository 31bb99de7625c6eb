-- The facts kept beside an intent's status that the gateway may have its
-- message: possibly_accepted (migration 00007) and accepted_after_deadline
-- with accepted_message_id (migration 00011).

-- name: IntentFlags :one
-- One intent's facts; the facts of many intents are read by
-- intentFlagsOfSQL (adapters/sqlserver/idlist.go). They are set by the
-- fenced FinishAttempts batch whose decision says so.
SELECT possibly_accepted, accepted_after_deadline, accepted_message_id FROM submission_intents
WHERE intent_id = sqlc.arg(intent_id);

-- name: ListAcceptedAfterDeadline :many
-- The listing filtered on the acceptance after the deadline, optionally
-- also on status, target (an empty string matches all) and the
-- possibly_accepted flag (0 matches all), newest first on the filtered
-- index.
SELECT intent_id, submission_target, payload, contract, status, created_at,
       next_due_at, attempt_count, final_outcome_status, final_outcome_reason,
       final_message_id, exhausted_reason, last_modified_at, not_before
FROM submission_intents
WHERE accepted_after_deadline = 1
  AND (CAST(sqlc.arg(status) AS varchar(16)) = '' OR status = CAST(sqlc.arg(status) AS varchar(16)))
  AND (CAST(sqlc.arg(submission_target) AS nvarchar(255)) = ''
       OR submission_target = CAST(sqlc.arg(submission_target) AS nvarchar(255)))
  AND (CAST(sqlc.arg(possibly_accepted_only) AS bit) = 0 OR possibly_accepted = 1)
  AND created_at <= CAST(sqlc.arg(before_created_at) AS datetime2(7))
  AND (created_at < CAST(sqlc.arg(before_created_at) AS datetime2(7))
       OR intent_id < sqlc.arg(before_intent_id))
ORDER BY created_at DESC, intent_id DESC
OFFSET 0 ROWS FETCH NEXT sqlc.arg(row_limit) ROWS ONLY;

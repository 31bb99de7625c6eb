-- In-doubt attempts: the possibly_accepted flag (migration 00007).

-- name: IsPossiblyAccepted :one
-- Whether one intent is flagged; the flags of many intents are read by
-- possiblyAcceptedOfSQL (adapters/sqlserver/idlist.go). The flag is set by
-- the fenced FinishAttempts batch whose decision says so.
SELECT possibly_accepted FROM submission_intents
WHERE intent_id = sqlc.arg(intent_id);

-- name: ListPossiblyAccepted :many
-- The listing filtered on the flag, optionally also on status and target
-- (an empty string matches all), newest first on the filtered index.
SELECT intent_id, submission_target, payload, contract, status, created_at,
       next_due_at, attempt_count, final_outcome_status, final_outcome_reason,
       final_message_id, exhausted_reason, last_modified_at, not_before, trace_parent
FROM submission_intents
WHERE possibly_accepted = 1
  AND (CAST(sqlc.arg(status) AS varchar(16)) = '' OR status = CAST(sqlc.arg(status) AS varchar(16)))
  AND (CAST(sqlc.arg(submission_target) AS nvarchar(255)) = ''
       OR submission_target = CAST(sqlc.arg(submission_target) AS nvarchar(255)))
  AND created_at <= CAST(sqlc.arg(before_created_at) AS datetime2(7))
  AND (created_at < CAST(sqlc.arg(before_created_at) AS datetime2(7))
       OR intent_id < sqlc.arg(before_intent_id))
ORDER BY created_at DESC, intent_id DESC
OFFSET 0 ROWS FETCH NEXT sqlc.arg(row_limit) ROWS ONLY;

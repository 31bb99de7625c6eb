-- In-doubt attempts: the possibly_accepted flag (migration 00007).

-- name: MarkPossiblyAccepted :exec
-- Runs in the fenced transaction of FinishAttempt, after ApplyDecision.
UPDATE submission_intents SET possibly_accepted = 1
WHERE intent_id = sqlc.arg(intent_id);

-- name: PossiblyAcceptedOf :many
-- Which of the given intents (a JSON array of intent ids) are flagged. The
-- COLLATE gives OPENJSON's value the key column's collation (see
-- ListAttemptsOfIntents).
SELECT intent_id FROM submission_intents
WHERE possibly_accepted = 1
  AND intent_id IN (
    SELECT CAST(value AS nvarchar(255)) COLLATE Latin1_General_100_BIN2
    FROM OPENJSON(CAST(sqlc.arg(intent_ids_json) AS nvarchar(max))));

-- name: ListPossiblyAccepted :many
-- The listing filtered on the flag, optionally also on status and target
-- (an empty string matches all), newest first on the filtered index.
SELECT intent_id, submission_target, payload, contract, status, created_at,
       next_due_at, attempt_count, final_outcome_status, final_outcome_reason,
       final_message_id, exhausted_reason, last_modified_at, not_before
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

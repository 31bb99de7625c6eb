-- Acceptances after the deadline: the accepted_after_deadline fact
-- (migration 00011).

-- name: MarkAcceptedAfterDeadline :exec
-- Runs in the transaction of a successful FinishAttempt, which fenced it.
UPDATE submission_intents
SET accepted_after_deadline = 1, accepted_message_id = sqlc.narg(accepted_message_id)
WHERE intent_id = sqlc.arg(intent_id);

-- name: ListAcceptedAfterDeadline :many
-- The listing filtered on the fact, optionally also on status, target (an
-- empty string matches all) and the possibly_accepted flag (0 matches
-- all): such intents are few, so the partial index is walked newest first
-- and the other filters tested row by row.
SELECT * FROM submission_intents INDEXED BY submission_intents_accepted_after_deadline
WHERE accepted_after_deadline = 1
  AND (CAST(sqlc.arg(status) AS TEXT) = '' OR status = sqlc.arg(status))
  AND (CAST(sqlc.arg(submission_target) AS TEXT) = '' OR submission_target = sqlc.arg(submission_target))
  AND (CAST(sqlc.arg(possibly_accepted_only) AS INTEGER) = 0 OR possibly_accepted = 1)
  AND (created_at, intent_id) < (CAST(sqlc.arg(before_created_at) AS INTEGER), CAST(sqlc.arg(before_intent_id) AS TEXT))
ORDER BY created_at DESC, intent_id DESC
LIMIT sqlc.arg(row_limit);

-- Acceptances after the deadline: the accepted_after_deadline fact
-- (migration 00011).

-- name: MarkAcceptedAfterDeadline :exec
-- Runs in the transaction of a successful FinishAttempt, which fenced it.
UPDATE submission_intents
SET accepted_after_deadline = 1, accepted_message_id = sqlc.narg(accepted_message_id)
WHERE intent_id = sqlc.arg(intent_id);

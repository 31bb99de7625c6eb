-- name: ListAttempts :many
SELECT attempt_number, started_at, finished_at, outcome_status, outcome_reason,
       message_id, error, sent, holder_id, lease_epoch
FROM submission_attempts
WHERE intent_id = sqlc.arg(intent_id)
ORDER BY attempt_number;

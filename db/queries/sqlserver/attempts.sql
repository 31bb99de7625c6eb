-- name: InsertAttempt :exec
-- Runs in the transaction of a successful StartAttempt, which fenced it. An
-- open attempt counts as sent: the reservation precedes the gateway call,
-- and after a crash nobody knows whether the call was made. FinishAttempt
-- writes what the executor knows.
INSERT INTO submission_attempts (
    intent_id, attempt_number, holder_id, lease_epoch, started_at, sent
) VALUES (
    sqlc.arg(intent_id),
    CAST(sqlc.arg(attempt_number) AS int),
    CAST(sqlc.arg(holder_id) AS varchar(128)),
    CAST(sqlc.arg(lease_epoch) AS bigint),
    CAST(sqlc.arg(started_at) AS datetime2(7)),
    1
);

-- name: FinishAttempt :execrows
-- Closes the attempt once; it runs after ApplyDecision, in its transaction.
UPDATE submission_attempts
SET finished_at = CAST(sqlc.arg(finished_at) AS datetime2(7)),
    outcome_status = sqlc.narg(outcome_status),
    outcome_reason = sqlc.narg(outcome_reason),
    message_id = sqlc.narg(message_id),
    error = sqlc.narg(error),
    sent = CAST(sqlc.arg(sent) AS bit)
WHERE intent_id = sqlc.arg(intent_id)
  AND attempt_number = CAST(sqlc.arg(attempt_number) AS int)
  AND finished_at IS NULL;

-- name: ListAttempts :many
SELECT attempt_number, started_at, finished_at, outcome_status, outcome_reason,
       message_id, error, sent, holder_id, lease_epoch
FROM submission_attempts
WHERE intent_id = sqlc.arg(intent_id)
ORDER BY attempt_number;

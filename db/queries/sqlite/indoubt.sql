-- In-doubt attempts: the possibly_accepted flag (migration 00007).

-- name: MarkPossiblyAccepted :exec
-- Runs in the transaction of a successful CloseAttempt, which fenced it.
UPDATE submission_intents SET possibly_accepted = 1
WHERE intent_id = sqlc.arg(intent_id);

-- In-doubt attempts: the possibly_accepted flag (migration 00007).

-- name: MarkPossiblyAccepted :exec
-- Runs in the transaction of a successful CloseAttempt, which fenced it.
UPDATE submission_intents SET possibly_accepted = 1
WHERE intent_id = sqlc.arg(intent_id);

-- name: ListPossiblyAccepted :many
-- The listing filtered on the flag, optionally also on status and target
-- (an empty string matches all): flagged intents are few, so the partial
-- index is walked newest first and the other filters tested row by row.
SELECT * FROM submission_intents INDEXED BY submission_intents_possibly_accepted
WHERE possibly_accepted = 1
  AND (CAST(sqlc.arg(status) AS TEXT) = '' OR status = sqlc.arg(status))
  AND (CAST(sqlc.arg(submission_target) AS TEXT) = '' OR submission_target = sqlc.arg(submission_target))
  AND (created_at, intent_id) < (CAST(sqlc.arg(before_created_at) AS INTEGER), CAST(sqlc.arg(before_intent_id) AS TEXT))
ORDER BY created_at DESC, intent_id DESC
LIMIT sqlc.arg(row_limit);

-- The facts kept beside an intent's status that the gateway may have its
-- message: possibly_accepted (migration 00007) and accepted_after_deadline
-- with accepted_message_id (migration 00011).

-- name: IntentFlags :one
-- One intent's facts; the facts of many intents are read by
-- intentFlagsOfSQL (adapters/sqlserver/idlist.go). They are set by the
-- fenced FinishAttempts batch whose decision says so.
SELECT possibly_accepted, accepted_after_deadline, accepted_message_id FROM submission_intents
WHERE intent_id = sqlc.arg(intent_id);

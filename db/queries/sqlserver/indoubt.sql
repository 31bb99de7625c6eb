-- In-doubt attempts: the possibly_accepted flag (migration 00007).

-- name: IsPossiblyAccepted :one
-- Whether one intent is flagged; the flags of many intents are read by
-- possiblyAcceptedOfSQL (adapters/sqlserver/idlist.go). The flag is set by
-- the fenced FinishAttempts batch whose decision says so.
SELECT possibly_accepted FROM submission_intents
WHERE intent_id = sqlc.arg(intent_id);

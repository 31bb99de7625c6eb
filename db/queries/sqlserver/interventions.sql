-- The intents' history of operator actions (SQL Server). The actions
-- themselves are hand-written batches (adapters/sqlserver/intervention.go):
-- each is one round trip with its own transaction and verdict, which sqlc
-- cannot generate.

-- name: ListIntentEvents :many
-- intent_id comes back so that the store keeps only the rows of exactly
-- the intentId asked for: SQL Server finds "a" equal to "a ".
SELECT intent_id, event_number, occurred_at, action, surface, role, session_tag
FROM submission_intent_events
WHERE intent_id = sqlc.arg(intent_id)
ORDER BY event_number;

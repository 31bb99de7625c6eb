-- name: TakenIntentIDs :many
-- Which of a batch's intentIds are stored already. It runs inside the
-- batch's write transaction, which BEGIN IMMEDIATE keeps free of other
-- writers, so the answer holds until the batch's insert.
SELECT intent_id FROM submission_intents WHERE intent_id IN (sqlc.slice(intent_ids));

-- name: ListIntentsOf :many
-- The rows of a batch submission, read back in its transaction: intent_ids
-- is a JSON array of strings, expanded by OPENJSON (whose value has the
-- database's default collation; the COLLATE gives it the key column's).
-- The insert that precedes it is hand-written in adapters/sqlserver/batch.go,
-- since sqlc cannot parse OPENJSON's WITH clause.
SELECT intent_id, submission_target, payload, contract, status, created_at,
       next_due_at, attempt_count, final_outcome_status, final_outcome_reason,
       final_message_id, exhausted_reason, last_modified_at, not_before
FROM submission_intents
WHERE intent_id IN (
    SELECT CAST(value AS nvarchar(255)) COLLATE Latin1_General_100_BIN2
    FROM OPENJSON(CAST(sqlc.arg(intent_ids_json) AS nvarchar(max))));

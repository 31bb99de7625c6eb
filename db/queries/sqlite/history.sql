-- The console's history (embedded SQLite store): counts per target and
-- bucket, from the rows' own times (Unix nanoseconds). A bucket number is
-- (time - from_ns) / bucket_ns, integer division; the store turns it back
-- into the bucket's start. Each query reads one range of an index that
-- holds everything it needs (00012_history_instances.sql), and the three
-- run in one read transaction, so they count one snapshot.

-- name: HistorySubmitted :many
SELECT submission_target,
       CAST((created_at - CAST(sqlc.arg(from_ns) AS INTEGER)) / CAST(sqlc.arg(bucket_ns) AS INTEGER) AS INTEGER) AS bucket,
       COUNT(*) AS n
FROM submission_intents INDEXED BY submission_intents_created
WHERE created_at >= CAST(sqlc.arg(from_ns) AS INTEGER) AND created_at < CAST(sqlc.arg(to_ns) AS INTEGER)
GROUP BY submission_target, bucket;

-- name: HistoryEnded :many
-- The literal status <> 'pending' is the partial index's own condition,
-- which SQLite needs to see in the query to use it.
SELECT submission_target, status,
       CAST((last_modified_at - CAST(sqlc.arg(from_ns) AS INTEGER)) / CAST(sqlc.arg(bucket_ns) AS INTEGER) AS INTEGER) AS bucket,
       COUNT(*) AS n
FROM submission_intents INDEXED BY submission_intents_ended
WHERE status <> 'pending'
  AND last_modified_at >= CAST(sqlc.arg(from_ns) AS INTEGER) AND last_modified_at < CAST(sqlc.arg(to_ns) AS INTEGER)
GROUP BY submission_target, status, bucket;

-- name: HistoryAttemptErrors :many
-- The partial index's conditions, literally, then each error's intent by
-- its key for the target; CROSS JOIN keeps SQLite from starting at the
-- intents.
SELECT i.submission_target,
       CAST((a.finished_at - CAST(sqlc.arg(from_ns) AS INTEGER)) / CAST(sqlc.arg(bucket_ns) AS INTEGER) AS INTEGER) AS bucket,
       COUNT(*) AS n
FROM submission_attempts AS a INDEXED BY submission_attempts_errors
CROSS JOIN submission_intents AS i
WHERE a.finished_at IS NOT NULL AND a.outcome_status IS NULL AND a.sent = 1
  AND a.finished_at >= CAST(sqlc.arg(from_ns) AS INTEGER) AND a.finished_at < CAST(sqlc.arg(to_ns) AS INTEGER)
  AND i.intent_id = a.intent_id
GROUP BY i.submission_target, bucket;

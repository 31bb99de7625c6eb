-- The console's history (SQL Server): counts per target and bucket, from
-- the rows' own times, in one statement and one round trip. A bucket
-- number is DATEDIFF(second, from, t) / bucket_seconds: from is a whole
-- second (ports.HistoryParams.Validate), so the second boundaries DATEDIFF
-- counts are whole seconds since from. Each branch seeks one range of an
-- index that covers it (00012_history_instances.sql); the filtered indexes
-- match because the branches repeat their filters' literals. Time
-- parameters are cast to datetime2(7), so that the columns are not
-- converted and the seeks stay seeks.

-- name: History :many
SELECT CAST('submitted' AS varchar(16)) AS kind, created.submission_target,
       created.bucket, CAST(COUNT_BIG(*) AS bigint) AS n
FROM (SELECT submission_target,
             CAST(DATEDIFF(second, CAST(sqlc.arg(from_at) AS datetime2(7)), created_at)
                  / CAST(sqlc.arg(bucket_seconds) AS int) AS int) AS bucket
      FROM submission_intents
      WHERE created_at >= CAST(sqlc.arg(from_at) AS datetime2(7))
        AND created_at < CAST(sqlc.arg(to_at) AS datetime2(7))) AS created
GROUP BY created.submission_target, created.bucket
UNION ALL
SELECT CAST(ended.status AS varchar(16)) AS kind, ended.submission_target,
       ended.bucket, CAST(COUNT_BIG(*) AS bigint) AS n
FROM (SELECT submission_target, status,
             CAST(DATEDIFF(second, CAST(sqlc.arg(from_at) AS datetime2(7)), last_modified_at)
                  / CAST(sqlc.arg(bucket_seconds) AS int) AS int) AS bucket
      FROM submission_intents
      WHERE status <> 'pending'
        AND last_modified_at >= CAST(sqlc.arg(from_at) AS datetime2(7))
        AND last_modified_at < CAST(sqlc.arg(to_at) AS datetime2(7))) AS ended
GROUP BY ended.status, ended.submission_target, ended.bucket
UNION ALL
SELECT CAST('error' AS varchar(16)) AS kind, failed.submission_target,
       failed.bucket, CAST(COUNT_BIG(*) AS bigint) AS n
FROM (SELECT i.submission_target,
             CAST(DATEDIFF(second, CAST(sqlc.arg(from_at) AS datetime2(7)), a.finished_at)
                  / CAST(sqlc.arg(bucket_seconds) AS int) AS int) AS bucket
      FROM submission_attempts AS a
      JOIN submission_intents AS i ON i.intent_id = a.intent_id
      WHERE a.finished_at IS NOT NULL AND a.outcome_status IS NULL AND a.sent = 1
        AND a.finished_at >= CAST(sqlc.arg(from_at) AS datetime2(7))
        AND a.finished_at < CAST(sqlc.arg(to_at) AS datetime2(7))) AS failed
GROUP BY failed.submission_target, failed.bucket;

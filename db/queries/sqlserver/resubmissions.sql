-- Resubmission links and the console's counts (SQL Server).

-- name: GetResubmissionOf :one
-- A plain read: two instances racing past it both insert, and the primary
-- key of the link decides (the loser rolls back and reads the winner's).
SELECT resubmitted_as FROM submission_resubmissions
WHERE intent_id = sqlc.arg(intent_id);

-- name: InsertResubmission :exec
INSERT INTO submission_resubmissions (intent_id, resubmitted_as, created_at)
VALUES (sqlc.arg(intent_id), sqlc.arg(resubmitted_as), SYSUTCDATETIME());

-- name: CountIntentsByTargetStatus :many
SELECT submission_target, status, CAST(COUNT_BIG(*) AS bigint) AS intent_count FROM submission_intents
GROUP BY submission_target, status
ORDER BY submission_target, status;

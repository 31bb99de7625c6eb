-- Resubmission links and the console's counts (embedded SQLite store).

-- name: GetResubmissionOf :one
SELECT resubmitted_as FROM submission_resubmissions WHERE intent_id = sqlc.arg(intent_id);

-- name: InsertResubmission :exec
INSERT INTO submission_resubmissions (intent_id, resubmitted_as, created_at)
VALUES (sqlc.arg(intent_id), sqlc.arg(resubmitted_as), sqlc.arg(created_at));

-- name: ListResubmissionsFrom :many
SELECT intent_id, resubmitted_as FROM submission_resubmissions
WHERE intent_id IN (sqlc.slice(intent_ids));

-- name: ListResubmissionsAs :many
SELECT intent_id, resubmitted_as FROM submission_resubmissions
WHERE resubmitted_as IN (sqlc.slice(intent_ids));

-- name: CountIntentsByTargetStatus :many
-- Walks the status index once per status; the console asks for it on each
-- overview, not on the hot path.
SELECT submission_target, status, COUNT(*) AS intent_count FROM submission_intents
GROUP BY submission_target, status
ORDER BY submission_target, status;

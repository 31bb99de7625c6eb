-- Fenced execution writes of the embedded SQLite store. Each write carries the
-- lease fence (lease_name, holder_id, lease_epoch) and applies only while that
-- lease is unexpired in database time, evaluated inside the same statement:
-- SQLite's clock, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000
-- (millisecond resolution, constant within one statement). Times are INTEGER
-- Unix nanoseconds; see intents.sql for the strictly increasing
-- last_modified_at.

-- name: StartAttempt :execrows
-- Counts the attempt on its intent; zero rows means fenced or not runnable.
-- It decides for StartAttempt as a whole (the store's writes refuse before
-- their first change): once it counted the attempt, InsertAttempt must
-- succeed, so it also requires that no row of that attempt exists.
UPDATE submission_intents
SET attempt_count = attempt_count + 1,
    last_modified_at = sqlc.arg(last_modified_at)
WHERE submission_intents.intent_id = sqlc.arg(intent_id)
  AND submission_intents.status = 'pending'
  AND submission_intents.attempt_count = CAST(sqlc.arg(attempt_number) AS INTEGER) - 1
  AND NOT EXISTS (
    SELECT 1 FROM submission_attempts AS a
    WHERE a.intent_id = submission_intents.intent_id AND a.attempt_number = sqlc.arg(attempt_number))
  AND EXISTS (
    SELECT 1 FROM submission_manager_leases AS l
    WHERE l.lease_name = sqlc.arg(lease_name) AND l.holder_id = sqlc.arg(holder_id)
      AND l.lease_epoch = sqlc.arg(lease_epoch)
      AND l.expires_at > CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000);

-- name: InsertAttempt :exec
-- Runs in the transaction of a successful StartAttempt, which fenced it. An
-- open attempt counts as sent: the reservation precedes the gateway call,
-- and after a crash nobody knows whether the call was made. FinishAttempt
-- writes what the executor knows.
INSERT INTO submission_attempts (intent_id, attempt_number, holder_id, lease_epoch, started_at, sent)
VALUES (sqlc.arg(intent_id), sqlc.arg(attempt_number), sqlc.arg(holder_id), sqlc.arg(lease_epoch), sqlc.arg(started_at), 1);

-- name: FinishAttempt :execrows
-- Closes an unfinished attempt; zero rows means fenced, already closed, or
-- not the latest attempt of a pending intent. It decides for FinishAttempt
-- as a whole: once it finished the attempt, ApplyDecision's conditions hold.
UPDATE submission_attempts
SET finished_at = sqlc.arg(finished_at),
    outcome_status = sqlc.arg(outcome_status),
    outcome_reason = sqlc.arg(outcome_reason),
    message_id = sqlc.arg(message_id),
    error = sqlc.arg(error),
    sent = sqlc.arg(sent)
WHERE submission_attempts.intent_id = sqlc.arg(intent_id)
  AND submission_attempts.attempt_number = sqlc.arg(attempt_number)
  AND submission_attempts.finished_at IS NULL
  AND EXISTS (
    SELECT 1 FROM submission_intents AS i
    WHERE i.intent_id = submission_attempts.intent_id AND i.status = 'pending'
      AND i.attempt_count = submission_attempts.attempt_number)
  AND EXISTS (
    SELECT 1 FROM submission_manager_leases AS l
    WHERE l.lease_name = sqlc.arg(lease_name) AND l.holder_id = sqlc.arg(holder_id)
      AND l.lease_epoch = sqlc.arg(lease_epoch)
      AND l.expires_at > CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000);

-- name: ApplyDecision :execrows
-- Runs in the transaction of a successful FinishAttempt, which fenced it and
-- checked what its WHERE repeats: the intent is pending and this is its
-- latest attempt.
UPDATE submission_intents
SET status = sqlc.arg(status),
    next_due_at = sqlc.arg(next_due_at),
    final_outcome_status = sqlc.arg(final_outcome_status),
    final_outcome_reason = sqlc.arg(final_outcome_reason),
    final_message_id = sqlc.arg(final_message_id),
    exhausted_reason = sqlc.arg(exhausted_reason),
    last_modified_at = sqlc.arg(last_modified_at)
WHERE submission_intents.intent_id = sqlc.arg(intent_id)
  AND submission_intents.status = 'pending'
  AND submission_intents.attempt_count = sqlc.arg(attempt_number);

-- name: FenceHolds :one
-- Tells a fenced write's zero rows apart: lost lease or intent moved on.
SELECT EXISTS (
    SELECT 1 FROM submission_manager_leases AS l
    WHERE l.lease_name = sqlc.arg(lease_name) AND l.holder_id = sqlc.arg(holder_id)
      AND l.lease_epoch = sqlc.arg(lease_epoch)
      AND l.expires_at > CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000) AS holds;

-- name: IntentExists :one
SELECT EXISTS (SELECT 1 FROM submission_intents WHERE intent_id = sqlc.arg(intent_id)) AS found;

-- name: RescheduleIntent :execrows
-- A deferral (the gateway's breaker is open, or it is paused): moves a
-- pending intent's next due time, or exhausts it with deadline_exceeded,
-- without an attempt row. Fenced like every execution write, and only while
-- the intent is pending at the attempt count the executor saw, with no
-- attempt open; zero rows means fenced or moved on (see FenceHolds).
UPDATE submission_intents
SET status = sqlc.arg(status),
    next_due_at = sqlc.arg(next_due_at),
    exhausted_reason = sqlc.arg(exhausted_reason),
    last_modified_at = sqlc.arg(last_modified_at)
WHERE submission_intents.intent_id = sqlc.arg(intent_id)
  AND submission_intents.status = 'pending'
  AND submission_intents.attempt_count = sqlc.arg(attempt_count)
  AND NOT EXISTS (
    SELECT 1 FROM submission_attempts AS a
    WHERE a.intent_id = submission_intents.intent_id
      AND a.attempt_number = submission_intents.attempt_count AND a.finished_at IS NULL)
  AND EXISTS (
    SELECT 1 FROM submission_manager_leases AS l
    WHERE l.lease_name = sqlc.arg(lease_name) AND l.holder_id = sqlc.arg(holder_id)
      AND l.lease_epoch = sqlc.arg(lease_epoch)
      AND l.expires_at > CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000);

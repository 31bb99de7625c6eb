-- Intent queries of the embedded SQLite store.
--
-- Times are INTEGER Unix nanoseconds (UTC). last_modified_at is set on every
-- insert and update to a stamp the store's single writer hands out inside
-- its write transaction:
--   MAX(writer's clock to the millisecond, newest last_modified_at + 1)
-- (the newest read with MaxModifiedAt once per transaction, under BEGIN
-- IMMEDIATE, which excludes every other writer, of this process or
-- another), so it is strictly increasing in commit order: a refresh cursor
-- that has seen (t, id) can never miss a row committed later, even one
-- written in the same millisecond, and a wall clock stepping back cannot
-- reorder changes.

-- name: InsertIntent :execrows
-- A duplicate intent_id inserts nothing (zero rows): the primary key decides
-- create-or-get, never a read before the write. No RETURNING: SQLite runs it
-- as a trigger, which costs a statement journal on every insert; the caller
-- knows the stamp it passed.
INSERT INTO submission_intents (
    intent_id, submission_target, payload, contract, gateway_type, mode,
    status, created_at, next_due_at, attempt_count, last_modified_at, not_before, trace_parent
) VALUES (
    sqlc.arg(intent_id), sqlc.arg(submission_target), sqlc.arg(payload), sqlc.arg(contract),
    sqlc.arg(gateway_type), sqlc.arg(mode), 'pending', sqlc.arg(created_at), sqlc.arg(next_due_at), 0,
    sqlc.arg(last_modified_at), sqlc.narg(not_before), sqlc.narg(trace_parent)
)
ON CONFLICT (intent_id) DO NOTHING;

-- name: MaxModifiedAt :one
-- The newest stamp, from the end of the refresh-cursor index.
SELECT CAST(COALESCE(MAX(last_modified_at), 0) AS INTEGER) AS max_modified_at FROM submission_intents;

-- name: GetIntent :one
SELECT * FROM submission_intents WHERE intent_id = sqlc.arg(intent_id);

-- name: GetIntentsOf :many
-- The intents named by a JSON array of intentIds, for the leader's read of
-- its next due intents. json_each keeps the statement's text fixed (unlike
-- sqlc.slice), so it is prepared once.
SELECT * FROM submission_intents
WHERE intent_id IN (SELECT value FROM json_each(CAST(sqlc.arg(intent_ids_json) AS TEXT)));

-- name: ListAttemptsOfJSON :many
-- The attempts of the intents named by a JSON array of intentIds, in order.
SELECT * FROM submission_attempts
WHERE intent_id IN (SELECT value FROM json_each(CAST(sqlc.arg(intent_ids_json) AS TEXT)))
ORDER BY intent_id, attempt_number;

-- name: ListAttempts :many
SELECT * FROM submission_attempts
WHERE intent_id = sqlc.arg(intent_id)
ORDER BY attempt_number;

-- name: ListAttemptsOfIntents :many
SELECT * FROM submission_attempts
WHERE intent_id IN (sqlc.slice(intent_ids))
ORDER BY intent_id, attempt_number;

-- name: ListPending :many
-- INDEXED BY: without statistics (a fresh or never-analysed file) the
-- planner prefers the status index and sorts every pending row for each
-- page, which makes a rebuild of a million intents take minutes.
SELECT intent_id, mode, next_due_at, last_modified_at FROM submission_intents INDEXED BY submission_intents_pending
WHERE status = 'pending' AND intent_id > CAST(sqlc.arg(after_intent_id) AS TEXT)
ORDER BY intent_id
LIMIT sqlc.arg(row_limit);

-- name: ListChanged :many
SELECT intent_id, status, mode, next_due_at, last_modified_at FROM submission_intents
WHERE (last_modified_at, intent_id) > (CAST(sqlc.arg(after_modified_at) AS INTEGER), CAST(sqlc.arg(after_intent_id) AS TEXT))
ORDER BY last_modified_at, intent_id
LIMIT sqlc.arg(row_limit);

-- name: LatestChange :one
SELECT last_modified_at, intent_id FROM submission_intents
ORDER BY last_modified_at DESC, intent_id DESC
LIMIT 1;

-- The intents listing (ListIntents) is written by adapters/sqlite/listing.go:
-- its filters combine freely and it pages both ways.

-- The console's session secret and sessions (embedded SQLite store). Not
-- fenced: they are operator writes.

-- name: GetConsoleSecret :one
-- The current secret is the newest generation; a rotation leaves no other.
SELECT generation, secret FROM submission_console_secrets
ORDER BY generation DESC LIMIT 1;

-- name: InsertFirstConsoleSecret :exec
-- Keeps the first secret only: every later caller reads the stored one.
INSERT INTO submission_console_secrets (generation, secret, created_at)
SELECT 1, sqlc.arg(secret), sqlc.arg(created_at)
WHERE NOT EXISTS (SELECT 1 FROM submission_console_secrets);

-- name: NextConsoleSecretGeneration :one
SELECT CAST(COALESCE(MAX(generation), 0) + 1 AS INTEGER) AS generation FROM submission_console_secrets;

-- name: InsertConsoleSecret :exec
INSERT INTO submission_console_secrets (generation, secret, created_at)
VALUES (sqlc.arg(generation), sqlc.arg(secret), sqlc.arg(created_at));

-- name: DeleteConsoleSecretsBefore :exec
DELETE FROM submission_console_secrets WHERE generation < sqlc.arg(generation);

-- name: DeleteAllConsoleSessions :exec
DELETE FROM submission_console_sessions;

-- name: InsertConsoleSession :execrows
-- No row inserted means the ID is kept already (core.ErrSessionExists).
INSERT INTO submission_console_sessions (session_id, started_at, expires_at)
VALUES (sqlc.arg(session_id), sqlc.arg(started_at), sqlc.arg(expires_at))
ON CONFLICT (session_id) DO NOTHING;

-- name: GetConsoleSession :one
SELECT started_at, expires_at FROM submission_console_sessions
WHERE session_id = sqlc.arg(session_id);

-- name: DeleteConsoleSession :execrows
DELETE FROM submission_console_sessions WHERE session_id = sqlc.arg(session_id);

-- name: DeleteExpiredConsoleSessions :execrows
DELETE FROM submission_console_sessions WHERE expires_at <= sqlc.arg(now);

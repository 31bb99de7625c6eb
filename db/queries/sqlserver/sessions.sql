-- The console's session secret and sessions (SQL Server). Not fenced: they
-- are operator writes.

-- name: GetConsoleSecret :one
-- The current secret is the newest generation; a rotation leaves no other.
SELECT generation, secret FROM submission_console_secrets
WHERE generation = (SELECT MAX(generation) FROM submission_console_secrets);

-- name: InsertFirstConsoleSecret :exec
-- Keeps the first secret only. Two instances may both pass the NOT EXISTS
-- under READ COMMITTED; the primary key then refuses the later one (2627),
-- which reads the stored secret instead.
INSERT INTO submission_console_secrets (generation, secret, created_at)
SELECT CAST(1 AS bigint), CAST(sqlc.arg(secret) AS varbinary(32)), SYSUTCDATETIME()
WHERE NOT EXISTS (SELECT 1 FROM submission_console_secrets);

-- name: NextConsoleSecretGeneration :one
SELECT CAST(COALESCE(MAX(generation), 0) + 1 AS bigint) AS generation FROM submission_console_secrets;

-- name: InsertConsoleSecret :exec
-- Concurrent rotations may pick the same generation; the primary key
-- refuses all but one (2627) and the others run again.
INSERT INTO submission_console_secrets (generation, secret, created_at)
VALUES (CAST(sqlc.arg(generation) AS bigint), CAST(sqlc.arg(secret) AS varbinary(32)), SYSUTCDATETIME());

-- name: DeleteConsoleSecretsBefore :exec
DELETE FROM submission_console_secrets WHERE generation < CAST(sqlc.arg(generation) AS bigint);

-- name: DeleteAllConsoleSessions :exec
DELETE FROM submission_console_sessions;

-- name: InsertConsoleSession :exec
-- A kept ID fails with a duplicate key (2627): core.ErrSessionExists.
INSERT INTO submission_console_sessions (session_id, started_at, expires_at)
VALUES (CAST(sqlc.arg(session_id) AS varbinary(32)), CAST(sqlc.arg(started_at) AS datetime2(7)),
        CAST(sqlc.arg(expires_at) AS datetime2(7)));

-- name: GetConsoleSession :one
SELECT started_at, expires_at FROM submission_console_sessions
WHERE session_id = CAST(sqlc.arg(session_id) AS varbinary(32));

-- name: DeleteConsoleSession :execrows
DELETE FROM submission_console_sessions WHERE session_id = CAST(sqlc.arg(session_id) AS varbinary(32));

-- name: DeleteExpiredConsoleSessions :execrows
DELETE FROM submission_console_sessions WHERE expires_at <= CAST(sqlc.arg(now) AS datetime2(7));

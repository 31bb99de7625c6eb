-- The console's session secret and its signed-in sessions, shared by every
-- instance on this file. The secret is random (32 bytes); the first
-- instance to need one stores generation 1, and a rotation stores the next
-- generation, deletes the older ones and every session, in one transaction.
-- A session is kept by the SHA-256 digest of the token its cookie carries
-- (the store never holds what a cookie needs); signing out deletes it. Times
-- are Unix nanoseconds, UTC; the expiry index serves the purge of expired
-- sessions.

-- +goose Up
CREATE TABLE submission_console_secrets (
    generation INTEGER NOT NULL PRIMARY KEY CHECK (generation >= 1),
    secret     BLOB    NOT NULL CHECK (length(secret) = 32),
    created_at INTEGER NOT NULL
);
CREATE TABLE submission_console_sessions (
    session_id BLOB    NOT NULL PRIMARY KEY CHECK (length(session_id) = 32),
    started_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL CHECK (expires_at > started_at)
) WITHOUT ROWID;
CREATE INDEX submission_console_sessions_expiry ON submission_console_sessions (expires_at);

-- +goose Down
DROP TABLE submission_console_sessions;
DROP TABLE submission_console_secrets;

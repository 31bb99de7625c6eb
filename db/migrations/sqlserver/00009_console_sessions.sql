-- The console's session secret and its signed-in sessions, shared by every
-- instance on this database. The secret is random (32 bytes); the first
-- instance to need one stores generation 1 (the primary key lets only one
-- of several starting together do so), and a rotation stores the next
-- generation, deletes the older ones and every session, in one transaction.
-- A session is kept by the SHA-256 digest of the token its cookie carries
-- (the store never holds what a cookie needs); signing out deletes it.
-- Binary keys carry no collation, so Babelfish compares them as SQL Server
-- does. Times are UTC; the expiry index serves the purge of expired
-- sessions.

-- +goose Up
CREATE TABLE submission_console_secrets (
    generation bigint        NOT NULL,
    secret     varbinary(32) NOT NULL,
    created_at datetime2(7)  NOT NULL,
    CONSTRAINT pk_submission_console_secrets PRIMARY KEY (generation),
    CONSTRAINT ck_submission_console_secrets_generation CHECK (generation >= 1),
    CONSTRAINT ck_submission_console_secrets_secret CHECK (DATALENGTH(secret) = 32)
);
CREATE TABLE submission_console_sessions (
    session_id varbinary(32) NOT NULL,
    started_at datetime2(7)  NOT NULL,
    expires_at datetime2(7)  NOT NULL,
    CONSTRAINT pk_submission_console_sessions PRIMARY KEY (session_id),
    CONSTRAINT ck_submission_console_sessions_id CHECK (DATALENGTH(session_id) = 32),
    CONSTRAINT ck_submission_console_sessions_expiry CHECK (expires_at > started_at)
);
CREATE INDEX ix_submission_console_sessions_expiry ON submission_console_sessions (expires_at);

-- +goose Down
DROP TABLE submission_console_sessions;
DROP TABLE submission_console_secrets;

-- SubmissionManager schema for SQL Server 2022 (T-SQL).
--
-- This file is also sqlc's schema: sqlc v1.31.1 parses it with its
-- postgresql engine, so it avoids T-SQL-only syntax that parser rejects
-- (brackets, CLUSTERED/NONCLUSTERED, IDENTITY) while meaning exactly what
-- SQL Server makes of it. docs/sqlserver.md explains the dialect rules.
--
-- Key and name columns use the binary collation Latin1_General_100_BIN2:
-- intent ids, targets, lease names and holder ids are case-sensitive
-- identifiers, and the database's default collation is usually
-- case-insensitive, which would make "A1" and "a1" the same primary key.
-- Go strings travel as nvarchar. The identifier columns that queries seek
-- with Go parameters (intent_id, submission_target) are nvarchar; the short
-- varchar code columns (status, mode, lease_name, holder_id, ...) are only
-- compared with literals or with parameters CAST to their type, so no
-- predicate converts a column and loses its index seek.

-- +goose Up
CREATE TABLE submission_intents (
    intent_id                nvarchar(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
    submission_target        nvarchar(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
    -- The compacted JSON exactly as stored, compared byte for byte for
    -- idempotency and forwarded to the gateway.
    payload                  varbinary(max) NOT NULL,
    -- The core.Contract snapshot taken at submission, as JSON.
    contract                 nvarchar(max) NOT NULL,
    gateway_type             varchar(16) NOT NULL,
    mode                     varchar(16) NOT NULL,
    status                   varchar(16) NOT NULL,
    created_at               datetime2(7) NOT NULL,
    -- NULL once the intent is terminal.
    next_due_at              datetime2(7) NULL,
    attempt_count            int NOT NULL,
    final_outcome_status     varchar(16) NULL,
    final_outcome_reason     nvarchar(max) NULL,
    final_message_id         nvarchar(max) NULL,
    exhausted_reason         varchar(32) NULL,
    -- The refresh cursor's change marker: SYSUTCDATETIME() in the same
    -- statement as every insert and update of the row.
    last_modified_at         datetime2(7) NOT NULL,
    CONSTRAINT pk_submission_intents PRIMARY KEY (intent_id),
    CONSTRAINT ck_submission_intents_contract_json CHECK (ISJSON(contract) = 1),
    CONSTRAINT ck_submission_intents_mode CHECK (mode IN ('realtime', 'batch')),
    CONSTRAINT ck_submission_intents_status CHECK (status IN ('pending', 'accepted', 'rejected', 'exhausted')),
    CONSTRAINT ck_submission_intents_attempt_count CHECK (attempt_count >= 0),
    CONSTRAINT ck_submission_intents_next_due CHECK (
        (status = 'pending' AND next_due_at IS NOT NULL)
        OR (status <> 'pending' AND next_due_at IS NULL)),
    CONSTRAINT ck_submission_intents_final_outcome CHECK (
        (status = 'accepted' AND final_outcome_status = 'accepted')
        OR (status = 'rejected' AND final_outcome_status = 'rejected' AND final_outcome_reason IS NOT NULL)
        OR (status IN ('pending', 'exhausted') AND final_outcome_status IS NULL
            AND final_outcome_reason IS NULL AND final_message_id IS NULL)),
    CONSTRAINT ck_submission_intents_exhausted_reason CHECK (
        (status = 'exhausted' AND exhausted_reason IN ('deadline_exceeded', 'max_attempts_reached', 'one_shot_completed'))
        OR (status <> 'exhausted' AND exhausted_reason IS NULL))
);

-- The leader's refresh cursor: WHERE (last_modified_at, intent_id) > cursor
-- ORDER BY last_modified_at, intent_id. The included columns cover the
-- query, so a refresh never looks rows up in the clustered index.
CREATE INDEX ix_submission_intents_changes
    ON submission_intents (last_modified_at, intent_id)
    INCLUDE (status, mode, next_due_at);

-- A new leader's rebuild pages through pending intents by intent_id. The
-- filter keeps the index as small as the pending set; queries match it
-- because they compare status with the literal 'pending'. status is
-- included because the rebuild query returns it: SQL Server does not
-- derive a returned filter column from the filter, and would otherwise
-- look up every pending row in the clustered index.
CREATE INDEX ix_submission_intents_pending
    ON submission_intents (intent_id)
    INCLUDE (status, mode, next_due_at, last_modified_at)
    WHERE status = 'pending';

-- Listing newest first, unfiltered and by status or by target; the index
-- is read backwards for ORDER BY created_at DESC, intent_id DESC.
CREATE INDEX ix_submission_intents_created
    ON submission_intents (created_at, intent_id);

CREATE INDEX ix_submission_intents_status_created
    ON submission_intents (status, created_at, intent_id);

CREATE INDEX ix_submission_intents_target_created
    ON submission_intents (submission_target, created_at, intent_id);

-- Attempts are append-only: a row is inserted when an attempt starts (the
-- reservation before the gateway call) and closed exactly once.
CREATE TABLE submission_attempts (
    intent_id      nvarchar(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
    attempt_number int NOT NULL,
    -- The leader that made the attempt, for the audit trail.
    holder_id      varchar(128) COLLATE Latin1_General_100_BIN2 NOT NULL,
    lease_epoch    bigint NOT NULL,
    started_at     datetime2(7) NOT NULL,
    -- NULL while the attempt is in flight.
    finished_at    datetime2(7) NULL,
    outcome_status varchar(16) NULL,
    outcome_reason nvarchar(max) NULL,
    message_id     nvarchar(max) NULL,
    error          nvarchar(max) NULL,
    CONSTRAINT pk_submission_attempts PRIMARY KEY (intent_id, attempt_number),
    -- The foreign key to submission_intents is 00002_attempts_intent_fk.sql's:
    -- SQL Server gets it, Babelfish cannot use it (databases migrated before
    -- that file got it here).
    CONSTRAINT ck_submission_attempts_number CHECK (attempt_number >= 1),
    CONSTRAINT ck_submission_attempts_outcome_status CHECK (outcome_status IN ('accepted', 'rejected'))
);

-- The leadership lease, exactly as the leader-lease spec
-- defines it. All its times are database time.
CREATE TABLE submission_manager_leases (
    lease_name  varchar(64) COLLATE Latin1_General_100_BIN2 NOT NULL,
    holder_id   varchar(128) COLLATE Latin1_General_100_BIN2 NOT NULL,
    lease_epoch bigint NOT NULL,
    acquired_at datetime2(7) NOT NULL,
    renewed_at  datetime2(7) NOT NULL,
    expires_at  datetime2(7) NOT NULL,
    CONSTRAINT pk_submission_manager_leases PRIMARY KEY (lease_name),
    CONSTRAINT ck_submission_manager_leases_epoch CHECK (lease_epoch >= 1)
);

-- +goose Down
DROP TABLE submission_manager_leases;
DROP TABLE submission_attempts;
DROP TABLE submission_intents;

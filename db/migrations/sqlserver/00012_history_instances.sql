-- The console's history and its list of instances.
--
-- History is read from the intents' and attempts' own times, bucketed at
-- read time (adapters/sqlserver/history.go; docs/operations.md says why
-- there is no rollup table). Each count has an index that covers what it
-- reads, so a window costs a range seek and no lookup into the clustered
-- index:
--   * submitted, by created_at: the listing's index gains the target as an
--     included column (the newest-first listing seeks it as before). It is
--     rebuilt here: on a large table plan the migration for a quiet time,
--     since CREATE INDEX without ONLINE = ON holds writes back meanwhile.
--   * ended, by the terminal write's last_modified_at: a filtered index of
--     the terminal intents only, written once per intent, when it ends.
--     The query compares status with the literal 'pending' to match it.
--   * attempt errors, by finished_at: a filtered index of the attempts that
--     closed with an error after reaching for the gateway, written once per
--     such attempt and never for one that got an answer. The query repeats
--     the filter's literals to match it. Its filter's columns are included
--     (constant in it, so they cost nothing): SQL Server otherwise looks
--     every row up in the clustered index to check an IS NULL filter the
--     query repeats.
-- DROP INDEX names table.index, the form sqlc's parser reads and both SQL
-- Server and Babelfish accept.
--
-- submission_instances holds each instance's heartbeat: its holder id (as
-- the lease's holder_id: printable ASCII, binary collation), build, role,
-- heartbeat interval, and the database's times of its first and latest
-- beat. Beats are not execution state: nothing fences them.

-- +goose Up
DROP INDEX submission_intents.ix_submission_intents_created;
CREATE INDEX ix_submission_intents_created
    ON submission_intents (created_at, intent_id)
    INCLUDE (submission_target);
CREATE INDEX ix_submission_intents_ended
    ON submission_intents (last_modified_at)
    INCLUDE (submission_target, status)
    WHERE status <> 'pending';
CREATE INDEX ix_submission_attempts_errors
    ON submission_attempts (finished_at)
    INCLUDE (outcome_status, sent)
    WHERE finished_at IS NOT NULL AND outcome_status IS NULL AND sent = 1;

CREATE TABLE submission_instances (
    holder_id    varchar(128) COLLATE Latin1_General_100_BIN2 NOT NULL,
    version      varchar(64) NOT NULL,
    role         varchar(16) NOT NULL,
    interval_ms  int NOT NULL,
    started_at   datetime2(7) NOT NULL,
    last_seen_at datetime2(7) NOT NULL,
    CONSTRAINT pk_submission_instances PRIMARY KEY (holder_id),
    CONSTRAINT ck_submission_instances_role CHECK (role IN ('leader', 'follower', 'api-only')),
    CONSTRAINT ck_submission_instances_interval CHECK (interval_ms >= 1)
);

-- +goose Down
DROP TABLE submission_instances;
DROP INDEX submission_attempts.ix_submission_attempts_errors;
DROP INDEX submission_intents.ix_submission_intents_ended;
DROP INDEX submission_intents.ix_submission_intents_created;
CREATE INDEX ix_submission_intents_created
    ON submission_intents (created_at, intent_id);

-- The console's history and its list of instances.
--
-- History is read from the intents' and attempts' own times, bucketed at
-- read time (adapters/sqlite/history.go; docs/operations.md says why
-- there is no rollup table). Each count has an index that holds
-- everything it reads, so a window costs a range of index entries:
--   * submitted, by created_at: the listing's index gains the target (the
--     newest-first listing reads it as before);
--   * ended, by the terminal write's last_modified_at: a partial index of
--     the terminal intents only, written once per intent, when it ends;
--   * attempt errors, by finished_at: a partial index of the attempts
--     that closed with an error after reaching for the gateway, written
--     once per such attempt and never for one that got an answer.
--
-- submission_instances holds each instance's heartbeat: its holder id,
-- build, role, heartbeat interval, and the database's times of its first
-- and latest beat (Unix nanoseconds, UTC, from SQLite's clock as the
-- lease's are). Beats are not execution state: nothing fences them.

-- +goose Up
DROP INDEX submission_intents_created;
CREATE INDEX submission_intents_created ON submission_intents (created_at, intent_id, submission_target);
CREATE INDEX submission_intents_ended ON submission_intents (last_modified_at, submission_target, status)
    WHERE status <> 'pending';
-- outcome_status and sent are constant in it; as columns they let the
-- query read the index alone.
CREATE INDEX submission_attempts_errors ON submission_attempts (finished_at, outcome_status, sent)
    WHERE finished_at IS NOT NULL AND outcome_status IS NULL AND sent = 1;

CREATE TABLE submission_instances (
    holder_id    TEXT    NOT NULL PRIMARY KEY CHECK (length(holder_id) BETWEEN 1 AND 128),
    version      TEXT    NOT NULL CHECK (length(version) <= 64),
    role         TEXT    NOT NULL CHECK (role IN ('leader', 'follower', 'api-only')),
    interval_ms  INTEGER NOT NULL CHECK (interval_ms >= 1),
    started_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE submission_instances;
DROP INDEX submission_attempts_errors;
DROP INDEX submission_intents_ended;
DROP INDEX submission_intents_created;
CREATE INDEX submission_intents_created ON submission_intents (created_at, intent_id);

-- SubmissionManager schema for the embedded SQLite store.
--
-- Every timestamp is an INTEGER of Unix nanoseconds in UTC: it orders
-- correctly, compares fast, and round-trips a Go time.Time exactly. Lease
-- times come from SQLite's own clock inside the statement (millisecond
-- resolution); last_modified_at is stamped by the store's single writer
-- (see adapters/sqlite/doc.go).

-- +goose Up
CREATE TABLE submission_intents (
    intent_id            TEXT    NOT NULL PRIMARY KEY,
    submission_target    TEXT    NOT NULL,
    -- The compacted JSON exactly as stored, compared and forwarded.
    payload              BLOB    NOT NULL,
    -- JSON snapshot of core.Contract taken at submission.
    contract             TEXT    NOT NULL CHECK (json_valid(contract)),
    gateway_type         TEXT    NOT NULL,
    mode                 TEXT    NOT NULL,
    status               TEXT    NOT NULL
        CHECK (status IN ('pending', 'accepted', 'rejected', 'exhausted')),
    created_at           INTEGER NOT NULL,
    next_due_at          INTEGER,
    attempt_count        INTEGER NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
    final_outcome_status TEXT CHECK (final_outcome_status IN ('accepted', 'rejected')),
    final_outcome_reason TEXT,
    final_message_id     TEXT,
    exhausted_reason     TEXT,
    -- Strictly increasing stamp of the row's last insert or update, in commit
    -- order: the leader's refresh cursor is (last_modified_at, intent_id).
    last_modified_at     INTEGER NOT NULL,
    CHECK ((status = 'pending') = (next_due_at IS NOT NULL)),
    CHECK ((status IN ('accepted', 'rejected')) = (final_outcome_status IS NOT NULL)),
    CHECK (final_outcome_status IS NOT NULL OR (final_outcome_reason IS NULL AND final_message_id IS NULL)),
    CHECK ((status = 'exhausted') = (exhausted_reason IS NOT NULL))
);

-- Refresh cursor: WHERE (last_modified_at, intent_id) > (?, ?) ORDER BY both.
CREATE INDEX submission_intents_changed ON submission_intents (last_modified_at, intent_id);
-- Rebuild: pending intents by id, covering what the schedule needs.
CREATE INDEX submission_intents_pending ON submission_intents (intent_id, mode, next_due_at, last_modified_at)
    WHERE status = 'pending';
-- Listing newest first, unfiltered and filtered.
CREATE INDEX submission_intents_created ON submission_intents (created_at, intent_id);
CREATE INDEX submission_intents_status_created ON submission_intents (status, created_at, intent_id);
CREATE INDEX submission_intents_target_created ON submission_intents (submission_target, created_at, intent_id);

-- Append-only: a row is inserted when an attempt starts and closed once.
CREATE TABLE submission_attempts (
    intent_id      TEXT    NOT NULL REFERENCES submission_intents (intent_id),
    attempt_number INTEGER NOT NULL CHECK (attempt_number >= 1),
    -- The leader that made the attempt: the audit trail of fencing.
    holder_id      TEXT    NOT NULL,
    lease_epoch    INTEGER NOT NULL,
    started_at     INTEGER NOT NULL,
    finished_at    INTEGER,
    outcome_status TEXT CHECK (outcome_status IN ('accepted', 'rejected')),
    outcome_reason TEXT,
    message_id     TEXT,
    error          TEXT,
    PRIMARY KEY (intent_id, attempt_number)
) WITHOUT ROWID;

-- The leadership lease (spec: leader-lease.md). All times are database time.
CREATE TABLE submission_manager_leases (
    lease_name  TEXT    NOT NULL PRIMARY KEY CHECK (length(lease_name) <= 64),
    holder_id   TEXT    NOT NULL CHECK (length(holder_id) <= 128),
    lease_epoch INTEGER NOT NULL CHECK (lease_epoch >= 1),
    acquired_at INTEGER NOT NULL,
    renewed_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);

-- +goose Down
DROP TABLE submission_manager_leases;
DROP TABLE submission_attempts;
DROP TABLE submission_intents;

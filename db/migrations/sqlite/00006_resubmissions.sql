-- Resubmission links: an ended intent resubmitted as a new one. Terminal
-- intents are append-only, so the link lives beside them instead of in
-- their rows; one row per original makes resubmitting idempotent (the
-- primary key decides), and the unique resubmitted_as makes the link
-- readable from both ends.

-- +goose Up
CREATE TABLE submission_resubmissions (
    intent_id      TEXT    NOT NULL PRIMARY KEY REFERENCES submission_intents (intent_id),
    resubmitted_as TEXT    NOT NULL UNIQUE REFERENCES submission_intents (intent_id),
    created_at     INTEGER NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE submission_resubmissions;

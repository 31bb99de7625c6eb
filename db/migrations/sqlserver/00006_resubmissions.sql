-- Resubmission links: an ended intent resubmitted as a new one. Terminal
-- intents are append-only, so the link lives beside them instead of in
-- their rows; one row per original makes resubmitting idempotent (the
-- primary key decides, also across instances), and the unique
-- resubmitted_as makes the link readable from both ends.

-- +goose Up
CREATE TABLE submission_resubmissions (
    intent_id      nvarchar(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
    resubmitted_as nvarchar(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
    created_at     datetime2(7) NOT NULL,
    CONSTRAINT pk_submission_resubmissions PRIMARY KEY (intent_id),
    CONSTRAINT uq_submission_resubmissions_as UNIQUE (resubmitted_as),
    CONSTRAINT fk_submission_resubmissions_intent FOREIGN KEY (intent_id)
        REFERENCES submission_intents (intent_id),
    CONSTRAINT fk_submission_resubmissions_as FOREIGN KEY (resubmitted_as)
        REFERENCES submission_intents (intent_id)
);

-- +goose Down
DROP TABLE submission_resubmissions;

-- possibly_accepted records that the gateway may have accepted an earlier
-- attempt of the intent whose answer was lost: an attempt closed with its
-- outcome unknown was followed by a duplicate_reference rejection
-- (core.PossiblyAccepted). It is set, never cleared, by the fenced
-- FinishAttempt write whose decision says so. The filtered index serves the
-- listing filtered on it, newest first; flagged intents are few.

-- +goose Up
ALTER TABLE submission_intents ADD possibly_accepted bit NOT NULL
    CONSTRAINT df_submission_intents_possibly_accepted DEFAULT 0;

CREATE INDEX ix_submission_intents_possibly_accepted
    ON submission_intents (created_at, intent_id)
    WHERE possibly_accepted = 1;

-- +goose Down
DROP INDEX ix_submission_intents_possibly_accepted ON submission_intents;

-- Babelfish ignores the default's name (it names defaults itself) and
-- drops them with their column, so the name is dropped where it exists.
IF OBJECT_ID('df_submission_intents_possibly_accepted', 'D') IS NOT NULL
    ALTER TABLE submission_intents DROP CONSTRAINT df_submission_intents_possibly_accepted;

ALTER TABLE submission_intents DROP COLUMN possibly_accepted;

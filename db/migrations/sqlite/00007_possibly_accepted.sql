-- possibly_accepted records that the gateway may have accepted an earlier
-- attempt of the intent whose answer was lost: an attempt closed with its
-- outcome unknown was followed by a duplicate_reference rejection
-- (core.PossiblyAccepted). It is set, never cleared, by the fenced
-- FinishAttempt write whose decision says so. The partial index serves the
-- listing filtered on it, newest first.

-- +goose Up
ALTER TABLE submission_intents ADD COLUMN possibly_accepted INTEGER NOT NULL DEFAULT 0
    CHECK (possibly_accepted IN (0, 1));
CREATE INDEX submission_intents_possibly_accepted ON submission_intents (created_at, intent_id)
    WHERE possibly_accepted = 1;

-- +goose Down
DROP INDEX submission_intents_possibly_accepted;
ALTER TABLE submission_intents DROP COLUMN possibly_accepted;

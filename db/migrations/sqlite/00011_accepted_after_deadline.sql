-- accepted_after_deadline records that the gateway accepted an attempt of
-- the intent at or after its acceptance deadline: the intent is exhausted
-- (deadline_exceeded), as the spec says, yet the gateway has its message,
-- so resending it could deliver it twice (core.Decision.
-- AcceptedAfterDeadline). accepted_message_id is the gateway's message
-- reference of that acceptance, when it gave one. Both are written by the
-- fenced FinishAttempt that exhausts the intent, and never change after
-- (the intent is terminal). The partial index serves the listing filtered
-- on the fact, newest first.

-- +goose Up
ALTER TABLE submission_intents ADD COLUMN accepted_after_deadline INTEGER NOT NULL DEFAULT 0
    CHECK (accepted_after_deadline IN (0, 1));
ALTER TABLE submission_intents ADD COLUMN accepted_message_id TEXT
    CHECK (accepted_message_id IS NULL OR accepted_after_deadline = 1);
CREATE INDEX submission_intents_accepted_after_deadline ON submission_intents (created_at, intent_id)
    WHERE accepted_after_deadline = 1;

-- +goose Down
DROP INDEX submission_intents_accepted_after_deadline;
ALTER TABLE submission_intents DROP COLUMN accepted_message_id;
ALTER TABLE submission_intents DROP COLUMN accepted_after_deadline;

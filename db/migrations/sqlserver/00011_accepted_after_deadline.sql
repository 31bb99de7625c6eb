-- accepted_after_deadline records that the gateway accepted an attempt of
-- the intent at or after its acceptance deadline: the intent is exhausted
-- (deadline_exceeded), as the spec says, yet the gateway has its message,
-- so resending it could deliver it twice (core.Decision.
-- AcceptedAfterDeadline). accepted_message_id is the gateway's message
-- reference of that acceptance, when it gave one (nvarchar(max), as
-- final_message_id). Both are written by the fenced FinishAttempts batch
-- that exhausts the intent, and never change after (the intent is
-- terminal). The filtered index serves the listing filtered on the fact,
-- newest first; such intents are few. Adding a bit with a default and a
-- NULL column are metadata-only changes: no row is rewritten.

-- +goose Up
ALTER TABLE submission_intents ADD accepted_after_deadline bit NOT NULL
    CONSTRAINT df_submission_intents_accepted_after_deadline DEFAULT 0;

ALTER TABLE submission_intents ADD accepted_message_id nvarchar(max) NULL;

CREATE INDEX ix_submission_intents_accepted_after_deadline
    ON submission_intents (created_at, intent_id)
    WHERE accepted_after_deadline = 1;

-- +goose Down
DROP INDEX ix_submission_intents_accepted_after_deadline ON submission_intents;

ALTER TABLE submission_intents DROP COLUMN accepted_message_id;

-- Babelfish ignores the default's name (it names defaults itself) and
-- drops them with their column, so the name is dropped where it exists.
IF OBJECT_ID('df_submission_intents_accepted_after_deadline', 'D') IS NOT NULL
    ALTER TABLE submission_intents DROP CONSTRAINT df_submission_intents_accepted_after_deadline;

ALTER TABLE submission_intents DROP COLUMN accepted_after_deadline;

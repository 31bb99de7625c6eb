-- Scheduled sends: the client's notBefore, kept as sent (UTC) because an
-- idempotent repeat must match it. NULL when the client named none, which
-- is every intent stored before this migration. The first attempt's due
-- time is next_due_at as before, so the schedule, the refresh and the
-- rebuild need nothing new. Adding a NULL column without a default is a
-- metadata-only change: no row is rewritten.

-- +goose Up
ALTER TABLE submission_intents ADD not_before datetime2(7) NULL;

-- +goose Down
ALTER TABLE submission_intents DROP COLUMN not_before;

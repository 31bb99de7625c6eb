-- trace_parent is the W3C traceparent an intent was submitted in (the
-- version-00 form, 55 characters: core.NormalizeTraceParent), so that the
-- spans of its attempts and every gateway call of it join the submitting
-- trace, on whichever instance they run and however much later. NULL when
-- the submission carried none, which is every intent stored before this
-- migration. Written once, with the intent; never part of an idempotent
-- repeat's comparison. Adding a NULL column rewrites no row.

-- +goose Up
ALTER TABLE submission_intents ADD COLUMN trace_parent TEXT;

-- +goose Down
ALTER TABLE submission_intents DROP COLUMN trace_parent;

-- Operator actions on pending intents: cancel and run now.
--
-- A cancelled intent is exhausted with exhausted_reason 'cancelled', which
-- the intents' CHECK must now allow (it is replaced under its own name).
--
-- An intent's history of those actions: each event is written in the
-- transaction of the action's own update of the intent row, whose lock
-- serialises the events of one intent, so event_number (from 1 per intent)
-- is one past the intent's last. occurred_at is SYSUTCDATETIME() of that
-- update. Who acted is kept as data: the surface (api or console), the role
-- of the key presented ('none' when the service has no keys) and, on the
-- console, a tag of the session (the start of its stored digest). No key,
-- cookie or token is ever kept. There is no FOREIGN KEY to the intents:
-- Babelfish cannot keep one between explicitly collated columns (see
-- 00008_resubmissions_fk.sql), and the store never relies on one: an event
-- is inserted only by the update that proves its intent exists, and
-- intents are never deleted.

-- +goose Up
ALTER TABLE submission_intents DROP CONSTRAINT ck_submission_intents_exhausted_reason;
ALTER TABLE submission_intents ADD CONSTRAINT ck_submission_intents_exhausted_reason CHECK (
    (status = 'exhausted' AND exhausted_reason IN ('deadline_exceeded', 'max_attempts_reached', 'one_shot_completed', 'cancelled'))
    OR (status <> 'exhausted' AND exhausted_reason IS NULL));
CREATE TABLE submission_intent_events (
    intent_id    nvarchar(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
    event_number int          NOT NULL,
    occurred_at  datetime2(7) NOT NULL,
    action       varchar(16)  NOT NULL,
    surface      varchar(16)  NOT NULL,
    role         varchar(16)  NOT NULL,
    session_tag  varchar(12)  NULL,
    CONSTRAINT pk_submission_intent_events PRIMARY KEY (intent_id, event_number),
    CONSTRAINT ck_submission_intent_events_number CHECK (event_number >= 1),
    CONSTRAINT ck_submission_intent_events_action CHECK (action IN ('cancel', 'run_now')),
    CONSTRAINT ck_submission_intent_events_surface CHECK (surface IN ('api', 'console')),
    CONSTRAINT ck_submission_intent_events_role CHECK (role IN ('none', 'client', 'operator')),
    CONSTRAINT ck_submission_intent_events_session CHECK (session_tag IS NULL OR LEN(session_tag) = 12)
);

-- +goose Down
-- (Down fails while an intent is cancelled: the older CHECK cannot hold it.)
DROP TABLE submission_intent_events;
ALTER TABLE submission_intents DROP CONSTRAINT ck_submission_intents_exhausted_reason;
ALTER TABLE submission_intents ADD CONSTRAINT ck_submission_intents_exhausted_reason CHECK (
    (status = 'exhausted' AND exhausted_reason IN ('deadline_exceeded', 'max_attempts_reached', 'one_shot_completed'))
    OR (status <> 'exhausted' AND exhausted_reason IS NULL));

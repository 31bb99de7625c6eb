-- An intent's history of operator actions: cancel and run now. Each event
-- is written in the transaction of the action's own update of the intent
-- row, numbered from 1 per intent (the single writer serialises them), with
-- the writer's stamp of that update as its time. Who acted is kept as data:
-- the surface (api or console), the role of the key presented ('none' when
-- the service has no keys) and, on the console, a tag of the session (the
-- start of its stored digest). No key, cookie or token is ever kept.
-- A cancelled intent is exhausted with exhausted_reason 'cancelled'; the
-- SQLite schema does not list the reasons, so that needs no change here.

-- +goose Up
CREATE TABLE submission_intent_events (
    intent_id    TEXT    NOT NULL REFERENCES submission_intents (intent_id),
    event_number INTEGER NOT NULL CHECK (event_number >= 1),
    occurred_at  INTEGER NOT NULL,
    action       TEXT    NOT NULL CHECK (action IN ('cancel', 'run_now')),
    surface      TEXT    NOT NULL CHECK (surface IN ('api', 'console')),
    role         TEXT    NOT NULL CHECK (role IN ('none', 'client', 'operator')),
    session_tag  TEXT    CHECK (length(session_tag) = 12),
    PRIMARY KEY (intent_id, event_number)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE submission_intent_events;

-- Gateway pauses: the operator's "make no calls to this gateway", by
-- gateway type or by gateway URL. They are operator writes, not execution
-- state, so nothing fences them; they live in the database so every
-- instance, and the next leader after a failover or restart, honours them.
-- One row per selector makes pausing idempotent (the primary key decides,
-- and the first paused_at stays). paused_at is Unix nanoseconds, UTC.

-- +goose Up
CREATE TABLE submission_gateway_pauses (
    selector_kind TEXT    NOT NULL CHECK (selector_kind IN ('type', 'url')),
    selector      TEXT    NOT NULL CHECK (length(selector) > 0),
    paused_at     INTEGER NOT NULL,
    PRIMARY KEY (selector_kind, selector)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE submission_gateway_pauses;

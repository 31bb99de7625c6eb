-- Gateway pauses: the operator's "make no calls to this gateway", by
-- gateway type or by gateway URL. They are operator writes, not execution
-- state, so nothing fences them; they live in the database so every
-- instance, and the next leader after a failover or restart, honours them.
-- One row per selector makes pausing idempotent across instances (the
-- primary key decides, and the first paused_at stays). The key is at most
-- 4 + 800 = 804 bytes, under SQL Server's 900-byte clustered key limit; a
-- gateway URL longer than 400 characters cannot be paused (the insert fails
-- with a truncation error). The selector's binary collation makes URLs
-- compare as the executor compares them, byte for byte.

-- +goose Up
CREATE TABLE submission_gateway_pauses (
    selector_kind varchar(4) COLLATE Latin1_General_100_BIN2 NOT NULL,
    selector      nvarchar(400) COLLATE Latin1_General_100_BIN2 NOT NULL,
    paused_at     datetime2(7) NOT NULL,
    CONSTRAINT pk_submission_gateway_pauses PRIMARY KEY (selector_kind, selector),
    CONSTRAINT ck_submission_gateway_pauses_kind CHECK (selector_kind IN ('type', 'url')),
    CONSTRAINT ck_submission_gateway_pauses_selector CHECK (LEN(selector) > 0)
);

-- +goose Down
DROP TABLE submission_gateway_pauses;

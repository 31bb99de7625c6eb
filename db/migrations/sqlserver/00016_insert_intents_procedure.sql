-- The batch insert as a stored procedure, for the reason 00014 and 00015
-- give: Babelfish parses a request's text at every execution, and the
-- batch insert sent as text ran to 6-20 kB a request (its items' JSON is a
-- parameter, but the statement also names one varbinary parameter per
-- payload, and reads the rows back). A procedure is parsed once.
--
-- Its parameters are the batch as four JSON arrays
-- (adapters/sqlserver/insert_request.go; jsontext.go says how their
-- strings are spelled): the items, each with its position ("ord"), its
-- contract's number, its columns, and its payload as a spelled string,
-- which becomes the payload's bytes through varchar in a Latin1
-- collation; the distinct contracts; the payloads longer than Babelfish's
-- OPENJSON WITH reads whole (4,000 UTF-16 code units, jsonTextLong),
-- whose items name them by position ("long"), read through OPENJSON's
-- default schema (whole on both servers) in one pass, as the contracts
-- are; and the intentIds, read by dbo.submission_intent_ids (00015) for
-- the read-back. They are apart because OPENJSON parses the whole
-- document it is given at every use. The adapter calls the procedure only
-- for a batch whose every payload can travel so (payloadTravelsInJSON
-- states which, and why), and sends any other batch as the text statement
-- that binds each payload as varbinary.
--
-- A text of an item is read back from its spelling
-- (dbo.submission_json_text) only when it holds a "~": every spelled text
-- does, and no other, so the common intentId or target skips the
-- function.
--
-- It answers what the text statement answers, and what every read of
-- intents answers after it (TestIntakeProceduresAnswerTheReadColumns holds
-- the column lists to the Go ones): the intentIds this call inserted (the
-- insert's OUTPUT), then readDetailedIntents' two result sets for every
-- item of the batch, stored now or before.

-- +goose Up
-- +goose StatementBegin
CREATE PROCEDURE dbo.submission_insert_intents
    @items nvarchar(max), @contracts nvarchar(max), @long nvarchar(max), @ids nvarchar(max)
AS
BEGIN
    -- Inserts the items whose intentId is not stored, as one statement in
    -- the caller's transaction or, alone, atomically. NOT EXISTS skips
    -- the intentIds already stored, so a repeat writes nothing. Two
    -- sessions can both pass it for one intentId (READ COMMITTED lets
    -- both; under row versioning and on Babelfish neither sees the
    -- other's uncommitted row): the primary key then fails the later
    -- insert with 2627 once the first commits. XACT_ABORT makes that
    -- error, as any other, end the call at once and roll back the caller's
    -- transaction if there is one (the setting ends with the call); the
    -- caller sends the batch again, and its NOT EXISTS then finds the
    -- winner's row. Without it the read-back would still run after the
    -- failed insert, and on Babelfish the error would reach the caller
    -- only after the read-back's rows. OFFSET 0 ROWS keeps the contracts'
    -- derived table from being merged into the join, where PostgreSQL
    -- would read each contract back once per item.
    SET NOCOUNT ON;
    SET XACT_ABORT ON;
    INSERT INTO submission_intents (
        intent_id, submission_target, payload, contract, gateway_type, mode,
        status, created_at, next_due_at, attempt_count, last_modified_at, not_before, trace_parent)
    OUTPUT inserted.intent_id
    SELECT v.intent_id, v.submission_target, v.payload, c.contract, v.gateway_type, v.mode,
           'pending', v.created_at, v.next_due_at, 0, SYSUTCDATETIME(), v.not_before, v.trace_parent
    FROM (SELECT CAST(CASE WHEN CHARINDEX(N'~', k.intent_id) = 0 THEN k.intent_id
                           ELSE dbo.submission_json_text(k.intent_id) END AS nvarchar(255)) AS intent_id,
                 CAST(CASE WHEN CHARINDEX(N'~', k.submission_target) = 0 THEN k.submission_target
                           ELSE dbo.submission_json_text(k.submission_target) END AS nvarchar(255)) AS submission_target,
                 CAST(CAST(CASE WHEN CHARINDEX(N'~', k.payload) = 0 THEN k.payload
                                ELSE dbo.submission_json_text(k.payload) END COLLATE Latin1_General_100_BIN2
                           AS varchar(max)) AS varbinary(max)) AS payload,
                 k.contract, k.gateway_type, k.mode, k.created_at, k.next_due_at, k.not_before, k.trace_parent
          FROM (SELECT j.intent_id COLLATE Latin1_General_100_BIN2 AS intent_id,
                       j.submission_target COLLATE Latin1_General_100_BIN2 AS submission_target,
                       CASE WHEN j.long IS NULL THEN j.payload ELSE l.payload END
                           COLLATE Latin1_General_100_BIN2 AS payload,
                       j.contract, j.gateway_type, j.mode, j.created_at, j.next_due_at, j.not_before, j.trace_parent
                FROM OPENJSON(@items) WITH (
                    intent_id nvarchar(max) '$.intent_id', submission_target nvarchar(max) '$.submission_target',
                    payload nvarchar(max) '$.payload', contract int '$.contract',
                    gateway_type varchar(16) '$.gateway_type', mode varchar(16) '$.mode',
                    created_at datetime2(7) '$.created_at', next_due_at datetime2(7) '$.next_due_at',
                    not_before datetime2(7) '$.not_before', trace_parent varchar(55) '$.trace_parent',
                    long int '$.long') AS j
                LEFT JOIN (SELECT CAST(l0.[key] AS int) AS number, l0.value AS payload
                           FROM OPENJSON(@long) AS l0) AS l ON l.number = j.long) AS k) AS v
    JOIN (SELECT CAST(c1.[key] AS int) AS number, dbo.submission_json_text(c1.contract) AS contract
          FROM (SELECT c0.[key], c0.value COLLATE Latin1_General_100_BIN2 AS contract
                FROM OPENJSON(@contracts) AS c0) AS c1
          ORDER BY number OFFSET 0 ROWS) AS c ON c.number = v.contract
    WHERE NOT EXISTS (SELECT 1 FROM submission_intents AS s WHERE s.intent_id = v.intent_id);
    -- Every item's row, stored now or before, with its facts, then the
    -- attempts of those rows, each intent's in order. The range on the
    -- ids' length always holds; PostgreSQL estimates it at 0.5 % of the
    -- function's rows (1,000, its guess for any table function) and so
    -- plans index lookups rather than scans of the two tables, as in
    -- 00017; SQL Server reads it as a no-op.
    SELECT intent_id, submission_target, payload, contract, status, created_at,
           next_due_at, attempt_count, final_outcome_status, final_outcome_reason,
           final_message_id, exhausted_reason, last_modified_at, not_before, trace_parent,
           possibly_accepted, accepted_after_deadline, accepted_message_id
    FROM submission_intents
    WHERE intent_id IN (SELECT i.intent_id COLLATE Latin1_General_100_BIN2 FROM dbo.submission_intent_ids(@ids) AS i
                        WHERE LEN(i.intent_id) BETWEEN 0 AND 255);
    SELECT intent_id, attempt_number, started_at, finished_at, outcome_status,
           outcome_reason, message_id, error, sent, holder_id, lease_epoch
    FROM submission_attempts
    WHERE intent_id IN (SELECT i.intent_id COLLATE Latin1_General_100_BIN2 FROM dbo.submission_intent_ids(@ids) AS i
                        WHERE LEN(i.intent_id) BETWEEN 0 AND 255)
    ORDER BY intent_id, attempt_number;
END;
-- +goose StatementEnd

-- +goose Down
DROP PROCEDURE dbo.submission_insert_intents;

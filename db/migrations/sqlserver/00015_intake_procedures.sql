-- The intake's hot statements as stored procedures, for the reason 00014
-- gives: Babelfish parses a request's text at every execution, at a few
-- milliseconds per kilobyte, and a submission's batch (1.5 kB) and a
-- read's (0.7 kB, tens of kilobytes for the executor's read of many
-- intents) cost more to parse than to run; a procedure is parsed once.
-- SQL Server caches either; the procedures change nothing there. On
-- Babelfish, with 64 clients on the store bench and back to back, they
-- ran CreateIntent at about twice the batch's rate, GetIntent at 1.7 to
-- 2.4 times, and the executor's read of 256 intents at 3.4 times or more
-- (630-4,500 intents/s as a batch, 15,500-23,400 as a procedure).
--
-- Every read of intents answers readDetailedIntents' two result sets
-- (adapters/sqlserver/details.go): the intents with their facts, in the
-- columns of detailedIntentColumns, then their attempts in those of
-- attemptColumns, each intent's in order. TestIntakeProceduresAnswerTheReadColumns
-- holds these lists to the Go ones: a migration that adds a column to
-- them changes these procedures too.
--
-- The intentId parameters are nvarchar(255), the key's type, and take the
-- key column's binary collation where they meet it (a parameter's own is
-- the database default, which yields to a column's), so "a" and "A" are
-- two intents.

-- +goose Up
-- +goose StatementBegin
CREATE PROCEDURE dbo.submission_get_intent @intent_id nvarchar(255)
AS
BEGIN
    -- Reads the intent whose key SQL Server finds equal to @intent_id
    -- (trailing spaces aside, which the caller refuses) with its facts,
    -- then its attempts.
    SET NOCOUNT ON;
    SELECT intent_id, submission_target, payload, contract, status, created_at,
           next_due_at, attempt_count, final_outcome_status, final_outcome_reason,
           final_message_id, exhausted_reason, last_modified_at, not_before, trace_parent,
           possibly_accepted, accepted_after_deadline, accepted_message_id
    FROM submission_intents
    WHERE intent_id = @intent_id;
    SELECT intent_id, attempt_number, started_at, finished_at, outcome_status,
           outcome_reason, message_id, error, sent, holder_id, lease_epoch
    FROM submission_attempts
    WHERE intent_id = @intent_id
    ORDER BY intent_id, attempt_number;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE PROCEDURE dbo.submission_create_intent
    @intent_id nvarchar(255), @submission_target nvarchar(255), @payload varbinary(max),
    @contract nvarchar(max), @gateway_type varchar(16), @mode varchar(16),
    @created_at datetime2(7), @next_due_at datetime2(7), @not_before datetime2(7),
    @trace_parent varchar(55)
AS
BEGIN
    -- Inserts the intent unless its intentId is stored, then reads the
    -- stored row as submission_get_intent does: up to three result sets,
    -- the first (one column, a row when this call inserted the intent)
    -- from the insert's OUTPUT. NOT EXISTS makes the common repeat (an
    -- intentId stored long ago) write nothing and raise nothing. Two
    -- sessions can pass NOT EXISTS at once for one intentId: READ
    -- COMMITTED lets both, and under READ_COMMITTED_SNAPSHOT or on
    -- Babelfish neither sees the other's uncommitted row. The primary key
    -- then fails the later insert with 2627 (2601 for a unique index) once
    -- the first has committed; the CATCH takes that as "another session
    -- won", and the read that follows, a new statement, sees the winner's
    -- committed row. Any other error is thrown again. The insert runs in
    -- autocommit: one row, one statement, atomic without a transaction.
    -- An empty @trace_parent is none, stored as NULL.
    SET NOCOUNT ON;
    BEGIN TRY
        INSERT INTO submission_intents (
            intent_id, submission_target, payload, contract, gateway_type, mode,
            status, created_at, next_due_at, attempt_count, last_modified_at, not_before, trace_parent)
        OUTPUT inserted.intent_id
        SELECT @intent_id, @submission_target, @payload, @contract, @gateway_type, @mode,
               'pending', @created_at, @next_due_at, 0, SYSUTCDATETIME(), @not_before,
               NULLIF(@trace_parent, '')
        WHERE NOT EXISTS (SELECT 1 FROM submission_intents AS s WHERE s.intent_id = @intent_id);
    END TRY
    BEGIN CATCH
        IF ERROR_NUMBER() NOT IN (2627, 2601) THROW;
    END CATCH;
    EXEC dbo.submission_get_intent @intent_id = @intent_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION dbo.submission_intent_ids (@ids nvarchar(max))
RETURNS TABLE
AS
RETURN (
    -- The intentIds of a JSON array of strings spelled as
    -- adapters/sqlserver/jsontext.go spells them, in the key's type. Every
    -- spelled string holds a "~" and no other does, so only those pay for
    -- the function. OPENJSON's default schema reads a string whole. The
    -- callers give the ids the key's binary collation where they use
    -- them: a COLLATE here does not survive the function on Babelfish,
    -- whose IN then makes "a" and "A" one value and finds only one of
    -- the two intents.
    SELECT CAST(CASE WHEN CHARINDEX(N'~', j.value) = 0 THEN j.value
                     ELSE dbo.submission_json_text(j.value) END
                AS nvarchar(255)) AS intent_id
    FROM OPENJSON(@ids) AS j
);
-- +goose StatementEnd

-- +goose StatementBegin
CREATE PROCEDURE dbo.submission_get_intents @ids nvarchar(max)
AS
BEGIN
    -- Reads the intents among @ids (submission_intent_ids) as
    -- submission_get_intent reads one.
    SET NOCOUNT ON;
    SELECT intent_id, submission_target, payload, contract, status, created_at,
           next_due_at, attempt_count, final_outcome_status, final_outcome_reason,
           final_message_id, exhausted_reason, last_modified_at, not_before, trace_parent,
           possibly_accepted, accepted_after_deadline, accepted_message_id
    FROM submission_intents
    WHERE intent_id IN (SELECT v.intent_id COLLATE Latin1_General_100_BIN2 FROM dbo.submission_intent_ids(@ids) AS v);
    SELECT intent_id, attempt_number, started_at, finished_at, outcome_status,
           outcome_reason, message_id, error, sent, holder_id, lease_epoch
    FROM submission_attempts
    WHERE intent_id IN (SELECT v.intent_id COLLATE Latin1_General_100_BIN2 FROM dbo.submission_intent_ids(@ids) AS v)
    ORDER BY intent_id, attempt_number;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE PROCEDURE dbo.submission_attempts_of @ids nvarchar(max)
AS
BEGIN
    -- Reads the attempts of the intents among @ids (a listing page's,
    -- whose rows the caller has), each intent's in order.
    SET NOCOUNT ON;
    SELECT intent_id, attempt_number, started_at, finished_at, outcome_status,
           outcome_reason, message_id, error, sent, holder_id, lease_epoch
    FROM submission_attempts
    WHERE intent_id IN (SELECT v.intent_id COLLATE Latin1_General_100_BIN2 FROM dbo.submission_intent_ids(@ids) AS v)
    ORDER BY intent_id, attempt_number;
END;
-- +goose StatementEnd

-- +goose Down
DROP PROCEDURE dbo.submission_attempts_of;
DROP PROCEDURE dbo.submission_get_intents;
DROP FUNCTION dbo.submission_intent_ids;
DROP PROCEDURE dbo.submission_create_intent;
DROP PROCEDURE dbo.submission_get_intent;

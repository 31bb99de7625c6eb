-- The executor's fenced batches as stored procedures. Babelfish parses the
-- T-SQL text of every request it is sent, again at every execution, at a
-- few milliseconds per kilobyte, and the batches' texts were tens of
-- kilobytes: a procedure is parsed once, when it is created, and its
-- statements planned once per session, so a call costs a short EXEC. SQL
-- Server caches either; the procedures change nothing there.
--
-- The items arrive as one JSON parameter (adapters/sqlserver/jsontext.go
-- says why and how its strings are spelled): each item's position in the
-- batch ("ord"), by which its verdict comes back, its columns, "spelled"
-- when one of its texts was spelled (only those are read back, through
-- submission_json_text), and "long", its position in the array, when one
-- of its texts is longer than Babelfish's OPENJSON WITH reads (4,000
-- UTF-16 code units): such a text is read through OPENJSON's default
-- schema, whole on both servers.
--
-- Every comparison of intentIds gives the items the key columns' binary
-- collation, in a select list: OPENJSON's columns have the database's
-- default collation, which is case-insensitive on Babelfish and on most
-- SQL Server installations, and "a" and "A" are two intents.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION dbo.submission_json_text (@spelled nvarchar(max))
RETURNS nvarchar(max)
AS
BEGIN
    -- Reads back a string jsonText spelled: every "~" of it begins a code,
    -- "~3" and a letter for a control character (rare: only then the
    -- loop), "~1" a quote, "~2" a backslash, and "~0" the "~" itself,
    -- replaced last, which makes the reading exact. The codes are matched
    -- in a binary collation, so that no code matches another's case.
    DECLARE @s nvarchar(max) = @spelled, @c int = 1;
    IF CHARINDEX(N'~3', @s) > 0
        WHILE @c < 32
        BEGIN
            SELECT @s = REPLACE(x.s, N'~3' + NCHAR(64 + @c), NCHAR(@c))
            FROM (SELECT CAST(@s AS nvarchar(max)) COLLATE Latin1_General_100_BIN2 AS s) AS x;
            SET @c = @c + 1;
        END;
    SELECT @s = REPLACE(REPLACE(REPLACE(x.s, N'~1', N'"'), N'~2', N'\'), N'~0', N'~')
    FROM (SELECT CAST(@s AS nvarchar(max)) COLLATE Latin1_General_100_BIN2 AS s) AS x;
    RETURN @s;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION dbo.submission_start_items (@items nvarchar(max))
RETURNS TABLE
AS
RETURN (
    SELECT j.ord,
           CAST(CASE WHEN j.spelled IS NULL THEN j.intent_id ELSE dbo.submission_json_text(j.intent_id) END
                AS nvarchar(255)) COLLATE Latin1_General_100_BIN2 AS intent_id,
           j.attempt_number, j.started_at
    FROM OPENJSON(@items) WITH (
        ord int '$.ord', intent_id nvarchar(max) '$.intent_id', attempt_number int '$.attempt_number',
        started_at datetime2(7) '$.started_at', spelled int '$.spelled') AS j
);
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION dbo.submission_finish_items (@items nvarchar(max))
RETURNS TABLE
AS
RETURN (
    SELECT k.ord,
           CAST(CASE WHEN k.spelled IS NULL THEN k.intent_id ELSE dbo.submission_json_text(k.intent_id) END
                AS nvarchar(255)) COLLATE Latin1_General_100_BIN2 AS intent_id,
           k.attempt_number, k.finished_at, k.outcome_status,
           CASE WHEN k.spelled IS NULL THEN k.outcome_reason ELSE dbo.submission_json_text(k.outcome_reason) END AS outcome_reason,
           CASE WHEN k.spelled IS NULL THEN k.message_id ELSE dbo.submission_json_text(k.message_id) END AS message_id,
           CASE WHEN k.spelled IS NULL THEN k.error ELSE dbo.submission_json_text(k.error) END AS error,
           k.sent, k.status, k.next_due_at, k.final_outcome_status,
           CASE WHEN k.spelled IS NULL THEN k.final_outcome_reason ELSE dbo.submission_json_text(k.final_outcome_reason) END AS final_outcome_reason,
           CASE WHEN k.spelled IS NULL THEN k.final_message_id ELSE dbo.submission_json_text(k.final_message_id) END AS final_message_id,
           k.exhausted_reason, k.possibly_accepted, k.accepted_after_deadline,
           CASE WHEN k.spelled IS NULL THEN k.accepted_message_id ELSE dbo.submission_json_text(k.accepted_message_id) END AS accepted_message_id
    FROM (
        SELECT j.ord, j.intent_id, j.attempt_number, j.finished_at, j.outcome_status, j.sent, j.status,
               j.next_due_at, j.final_outcome_status, j.exhausted_reason, j.possibly_accepted,
               j.accepted_after_deadline, j.spelled,
               CASE WHEN j.long IS NULL THEN j.outcome_reason ELSE l.outcome_reason END AS outcome_reason,
               CASE WHEN j.long IS NULL THEN j.message_id ELSE l.message_id END AS message_id,
               CASE WHEN j.long IS NULL THEN j.error ELSE l.error END AS error,
               CASE WHEN j.long IS NULL THEN j.final_outcome_reason ELSE l.final_outcome_reason END AS final_outcome_reason,
               CASE WHEN j.long IS NULL THEN j.final_message_id ELSE l.final_message_id END AS final_message_id,
               CASE WHEN j.long IS NULL THEN j.accepted_message_id ELSE l.accepted_message_id END AS accepted_message_id
        FROM OPENJSON(@items) WITH (
            ord int '$.ord', intent_id nvarchar(max) '$.intent_id', attempt_number int '$.attempt_number',
            finished_at datetime2(7) '$.finished_at', outcome_status varchar(16) '$.outcome_status',
            outcome_reason nvarchar(max) '$.outcome_reason', message_id nvarchar(max) '$.message_id',
            error nvarchar(max) '$.error', sent bit '$.sent', status varchar(16) '$.status',
            next_due_at datetime2(7) '$.next_due_at', final_outcome_status varchar(16) '$.final_outcome_status',
            final_outcome_reason nvarchar(max) '$.final_outcome_reason', final_message_id nvarchar(max) '$.final_message_id',
            exhausted_reason varchar(32) '$.exhausted_reason', possibly_accepted bit '$.possibly_accepted',
            accepted_after_deadline bit '$.accepted_after_deadline', accepted_message_id nvarchar(max) '$.accepted_message_id',
            spelled int '$.spelled', long int '$.long') AS j
        -- A long item's texts, read whole through the default schema; an
        -- item without "long" matches no element and gets NULLs here.
        OUTER APPLY (
            SELECT MAX(CASE WHEN m.[key] = N'outcome_reason' THEN m.value END) AS outcome_reason,
                   MAX(CASE WHEN m.[key] = N'message_id' THEN m.value END) AS message_id,
                   MAX(CASE WHEN m.[key] = N'error' THEN m.value END) AS error,
                   MAX(CASE WHEN m.[key] = N'final_outcome_reason' THEN m.value END) AS final_outcome_reason,
                   MAX(CASE WHEN m.[key] = N'final_message_id' THEN m.value END) AS final_message_id,
                   MAX(CASE WHEN m.[key] = N'accepted_message_id' THEN m.value END) AS accepted_message_id
            FROM OPENJSON(@items) AS e
            CROSS APPLY OPENJSON(e.value) AS m
            WHERE j.long IS NOT NULL AND e.[key] = CAST(j.long AS nvarchar(10))) AS l
    ) AS k
);
-- +goose StatementEnd

-- +goose StatementBegin
CREATE PROCEDURE dbo.submission_start_attempts
    @items nvarchar(max), @lease_name varchar(64), @holder_id varchar(128), @lease_epoch bigint,
    @lock_resource nvarchar(255), @lock_timeout int
AS
BEGIN
    -- Reserves attempts under the fence (fence.go says why the lease lock,
    -- held shared, and the lease check make a write fenced). Each item
    -- counts its attempt on its intent only while the intent is pending at
    -- attempt count number-1, and inserts the attempt row, open and counted
    -- as sent: the reservation precedes the gateway call. last_modified_at
    -- moves strictly forward, as in every intent update. Answers (ord,
    -- verdict): 0 reserved, 1 not runnable, 2 no such intent. Throws 51001
    -- when the lease lock is not granted and 51000 when the fence does not
    -- hold; XACT_ABORT then rolls everything back.
    SET NOCOUNT ON;
    SET XACT_ABORT ON;
    DECLARE @lock_status int, @now datetime2(7);
    DECLARE @started TABLE (intent_id nvarchar(255) NOT NULL);
    BEGIN TRANSACTION;
    EXEC @lock_status = sp_getapplock @Resource = @lock_resource, @LockMode = 'Shared',
        @LockOwner = 'Transaction', @LockTimeout = @lock_timeout;
    IF @lock_status < 0 THROW 51001, N'the lease lock was not granted', 1;
    IF NOT EXISTS (SELECT 1 FROM submission_manager_leases
        WHERE lease_name = @lease_name AND holder_id = @holder_id
          AND lease_epoch = @lease_epoch AND expires_at > SYSUTCDATETIME())
        THROW 51000, N'fenced: the lease is not held at this epoch', 1;
    SET @now = SYSUTCDATETIME();
    -- Babelfish cannot read an UPDATE's FROM tables in its OUTPUT clause,
    -- so the updated rows come back by key; and an UPDATE names its target
    -- table only as its target (repeated in FROM, it hides FROM's other
    -- tables from SET there).
    UPDATE submission_intents
    SET attempt_count = submission_intents.attempt_count + 1,
        last_modified_at = CASE WHEN @now > submission_intents.last_modified_at THEN @now
                                ELSE DATEADD(nanosecond, 100, submission_intents.last_modified_at) END
    OUTPUT inserted.intent_id INTO @started (intent_id)
    FROM dbo.submission_start_items(@items) AS v
    WHERE submission_intents.intent_id = v.intent_id
      AND submission_intents.status = 'pending'
      AND submission_intents.attempt_count = v.attempt_number - 1;
    INSERT INTO submission_attempts (intent_id, attempt_number, holder_id, lease_epoch, started_at, sent)
    SELECT v.intent_id, v.attempt_number, @holder_id, @lease_epoch, v.started_at, 1
    FROM dbo.submission_start_items(@items) AS v
    WHERE v.intent_id IN (SELECT s.intent_id COLLATE Latin1_General_100_BIN2 FROM @started AS s);
    COMMIT TRANSACTION;
    SELECT v.ord,
           CASE WHEN v.intent_id IN (SELECT s.intent_id COLLATE Latin1_General_100_BIN2 FROM @started AS s) THEN 0
                WHEN EXISTS (SELECT 1 FROM submission_intents AS t WHERE t.intent_id = v.intent_id) THEN 1
                ELSE 2 END AS verdict
    FROM dbo.submission_start_items(@items) AS v;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE PROCEDURE dbo.submission_finish_attempts
    @items nvarchar(max), @lease_name varchar(64), @holder_id varchar(128), @lease_epoch bigint,
    @lock_resource nvarchar(255), @lock_timeout int
AS
BEGIN
    -- Closes attempts and applies their decisions under the fence. An
    -- item applies only while its intent is pending at attempt count
    -- number and that attempt is open. The intent row is updated before
    -- the attempt row, the order submission_start_attempts uses, so the two
    -- never deadlock each other. Answers and throws as
    -- submission_start_attempts does.
    SET NOCOUNT ON;
    SET XACT_ABORT ON;
    DECLARE @lock_status int, @now datetime2(7);
    DECLARE @applied TABLE (intent_id nvarchar(255) NOT NULL);
    BEGIN TRANSACTION;
    EXEC @lock_status = sp_getapplock @Resource = @lock_resource, @LockMode = 'Shared',
        @LockOwner = 'Transaction', @LockTimeout = @lock_timeout;
    IF @lock_status < 0 THROW 51001, N'the lease lock was not granted', 1;
    IF NOT EXISTS (SELECT 1 FROM submission_manager_leases
        WHERE lease_name = @lease_name AND holder_id = @holder_id
          AND lease_epoch = @lease_epoch AND expires_at > SYSUTCDATETIME())
        THROW 51000, N'fenced: the lease is not held at this epoch', 1;
    SET @now = SYSUTCDATETIME();
    UPDATE submission_intents
    SET status = v.status,
        next_due_at = v.next_due_at,
        final_outcome_status = v.final_outcome_status,
        final_outcome_reason = v.final_outcome_reason,
        final_message_id = v.final_message_id,
        exhausted_reason = v.exhausted_reason,
        possibly_accepted = CASE WHEN v.possibly_accepted = 1 THEN 1 ELSE submission_intents.possibly_accepted END,
        accepted_after_deadline = v.accepted_after_deadline,
        accepted_message_id = v.accepted_message_id,
        last_modified_at = CASE WHEN @now > submission_intents.last_modified_at THEN @now
                                ELSE DATEADD(nanosecond, 100, submission_intents.last_modified_at) END
    OUTPUT inserted.intent_id INTO @applied (intent_id)
    FROM dbo.submission_finish_items(@items) AS v
    WHERE submission_intents.intent_id = v.intent_id
      AND submission_intents.status = 'pending'
      AND submission_intents.attempt_count = v.attempt_number
      AND EXISTS (SELECT 1 FROM submission_attempts AS a
                  WHERE a.intent_id = submission_intents.intent_id AND a.attempt_number = v.attempt_number
                    AND a.finished_at IS NULL);
    UPDATE submission_attempts
    SET finished_at = v.finished_at,
        outcome_status = v.outcome_status,
        outcome_reason = v.outcome_reason,
        message_id = v.message_id,
        error = v.error,
        sent = v.sent
    FROM dbo.submission_finish_items(@items) AS v
    WHERE submission_attempts.intent_id = v.intent_id
      AND submission_attempts.attempt_number = v.attempt_number
      AND submission_attempts.intent_id IN (SELECT s.intent_id COLLATE Latin1_General_100_BIN2 FROM @applied AS s);
    COMMIT TRANSACTION;
    SELECT v.ord,
           CASE WHEN v.intent_id IN (SELECT s.intent_id COLLATE Latin1_General_100_BIN2 FROM @applied AS s) THEN 0
                WHEN EXISTS (SELECT 1 FROM submission_intents AS t WHERE t.intent_id = v.intent_id) THEN 1
                ELSE 2 END AS verdict
    FROM dbo.submission_finish_items(@items) AS v;
END;
-- +goose StatementEnd

-- +goose Down
DROP PROCEDURE dbo.submission_finish_attempts;
DROP PROCEDURE dbo.submission_start_attempts;
DROP FUNCTION dbo.submission_finish_items;
DROP FUNCTION dbo.submission_start_items;
DROP FUNCTION dbo.submission_json_text;

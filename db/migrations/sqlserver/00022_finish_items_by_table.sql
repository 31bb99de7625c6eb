-- A batch of results (dbo.submission_finish_attempts, 00018) read each
-- item's twenty members twice, through submission_finish_items, for the
-- intent's update and for the attempt's, though each update writes only
-- its own table's members. On Babelfish a table-valued function is a
-- PL/tsql function that PostgreSQL cannot inline, so it computes every
-- column it returns, and OPENJSON ... WITH costs per member and per row
-- (00018's header): a batch of results cost the server about twice a
-- batch of reservations, 0.23 against 0.12 ms per item
-- (BenchmarkExecutorRounds' calls measured one by one, batches of 50).
-- Each update now reads its table's members through a function of its
-- own (eleven and nine members, with the position, intentId and the two
-- flags), the same JSON, spelled and long texts as 00014 reads them.
-- submission_finish_items, which nothing calls any more, is dropped.
-- Everything else is as 00018 wrote it, and so are the semantics. The
-- Down section restores 00014's function and 00018's procedure and drops
-- the two new functions.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION dbo.submission_finish_intent_items (@items nvarchar(max))
RETURNS TABLE
AS
RETURN (
    -- The members of a result's item that its intent's update writes.
    SELECT k.ord,
           CAST(CASE WHEN k.spelled IS NULL THEN k.intent_id ELSE dbo.submission_json_text(k.intent_id) END
                AS nvarchar(255)) COLLATE Latin1_General_100_BIN2 AS intent_id,
           k.status, k.next_due_at, k.final_outcome_status,
           CASE WHEN k.spelled IS NULL THEN k.final_outcome_reason ELSE dbo.submission_json_text(k.final_outcome_reason) END AS final_outcome_reason,
           CASE WHEN k.spelled IS NULL THEN k.final_message_id ELSE dbo.submission_json_text(k.final_message_id) END AS final_message_id,
           k.exhausted_reason, k.possibly_accepted, k.accepted_after_deadline,
           CASE WHEN k.spelled IS NULL THEN k.accepted_message_id ELSE dbo.submission_json_text(k.accepted_message_id) END AS accepted_message_id
    FROM (
        SELECT j.ord, j.intent_id, j.status, j.next_due_at, j.final_outcome_status, j.exhausted_reason,
               j.possibly_accepted, j.accepted_after_deadline, j.spelled,
               CASE WHEN j.long IS NULL THEN j.final_outcome_reason ELSE l.final_outcome_reason END AS final_outcome_reason,
               CASE WHEN j.long IS NULL THEN j.final_message_id ELSE l.final_message_id END AS final_message_id,
               CASE WHEN j.long IS NULL THEN j.accepted_message_id ELSE l.accepted_message_id END AS accepted_message_id
        FROM OPENJSON(@items) WITH (
            ord int '$.ord', intent_id nvarchar(max) '$.intent_id', status varchar(16) '$.status',
            next_due_at datetime2(7) '$.next_due_at', final_outcome_status varchar(16) '$.final_outcome_status',
            final_outcome_reason nvarchar(max) '$.final_outcome_reason', final_message_id nvarchar(max) '$.final_message_id',
            exhausted_reason varchar(32) '$.exhausted_reason', possibly_accepted bit '$.possibly_accepted',
            accepted_after_deadline bit '$.accepted_after_deadline', accepted_message_id nvarchar(max) '$.accepted_message_id',
            spelled int '$.spelled', long int '$.long') AS j
        -- A long item's texts, read whole through the default schema; an
        -- item without "long" matches no element and gets NULLs here.
        OUTER APPLY (
            SELECT MAX(CASE WHEN m.[key] = N'final_outcome_reason' THEN m.value END) AS final_outcome_reason,
                   MAX(CASE WHEN m.[key] = N'final_message_id' THEN m.value END) AS final_message_id,
                   MAX(CASE WHEN m.[key] = N'accepted_message_id' THEN m.value END) AS accepted_message_id
            FROM OPENJSON(@items) AS e
            CROSS APPLY OPENJSON(e.value) AS m
            WHERE j.long IS NOT NULL AND e.[key] = CAST(j.long AS nvarchar(10))) AS l
    ) AS k
);
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION dbo.submission_finish_attempt_items (@items nvarchar(max))
RETURNS TABLE
AS
RETURN (
    -- The members of a result's item that its attempt's update writes.
    SELECT k.ord,
           CAST(CASE WHEN k.spelled IS NULL THEN k.intent_id ELSE dbo.submission_json_text(k.intent_id) END
                AS nvarchar(255)) COLLATE Latin1_General_100_BIN2 AS intent_id,
           k.attempt_number, k.finished_at, k.outcome_status,
           CASE WHEN k.spelled IS NULL THEN k.outcome_reason ELSE dbo.submission_json_text(k.outcome_reason) END AS outcome_reason,
           CASE WHEN k.spelled IS NULL THEN k.message_id ELSE dbo.submission_json_text(k.message_id) END AS message_id,
           CASE WHEN k.spelled IS NULL THEN k.error ELSE dbo.submission_json_text(k.error) END AS error,
           k.sent
    FROM (
        SELECT j.ord, j.intent_id, j.attempt_number, j.finished_at, j.outcome_status, j.sent, j.spelled,
               CASE WHEN j.long IS NULL THEN j.outcome_reason ELSE l.outcome_reason END AS outcome_reason,
               CASE WHEN j.long IS NULL THEN j.message_id ELSE l.message_id END AS message_id,
               CASE WHEN j.long IS NULL THEN j.error ELSE l.error END AS error
        FROM OPENJSON(@items) WITH (
            ord int '$.ord', intent_id nvarchar(max) '$.intent_id', attempt_number int '$.attempt_number',
            finished_at datetime2(7) '$.finished_at', outcome_status varchar(16) '$.outcome_status',
            outcome_reason nvarchar(max) '$.outcome_reason', message_id nvarchar(max) '$.message_id',
            error nvarchar(max) '$.error', sent bit '$.sent', spelled int '$.spelled', long int '$.long') AS j
        OUTER APPLY (
            SELECT MAX(CASE WHEN m.[key] = N'outcome_reason' THEN m.value END) AS outcome_reason,
                   MAX(CASE WHEN m.[key] = N'message_id' THEN m.value END) AS message_id,
                   MAX(CASE WHEN m.[key] = N'error' THEN m.value END) AS error
            FROM OPENJSON(@items) AS e
            CROSS APPLY OPENJSON(e.value) AS m
            WHERE j.long IS NOT NULL AND e.[key] = CAST(j.long AS nvarchar(10))) AS l
    ) AS k
);
-- +goose StatementEnd

DROP PROCEDURE dbo.submission_finish_attempts;

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
    --
    -- The first UPDATE changes nothing: it locks the intents that may
    -- apply, so that the items found to apply (@applied, their positions
    -- as ",0,3," matched with LIKE: see the header) stay so until the
    -- commit, whoever else writes those intents meanwhile. Each statement
    -- reads only the members it needs: those that need only an item's
    -- position, intentId and attempt number through submission_start_items
    -- (which reads a started_at the item does not have, as NULL), the
    -- intent's update through submission_finish_intent_items and the
    -- attempt's through submission_finish_attempt_items (00022's header).
    SET NOCOUNT ON;
    SET XACT_ABORT ON;
    DECLARE @lock_status int, @now datetime2(7), @applied nvarchar(max);
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
    SET attempt_count = submission_intents.attempt_count
    FROM dbo.submission_start_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND submission_intents.intent_id = v.intent_id
      AND submission_intents.status = 'pending'
      AND submission_intents.attempt_count = v.attempt_number;
    SELECT @applied = N',' + STRING_AGG(CAST(v.ord AS nvarchar(max)), N',') + N','
    FROM dbo.submission_start_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND EXISTS (SELECT 1 FROM submission_intents AS t
                  WHERE t.intent_id = v.intent_id AND t.status = 'pending' AND t.attempt_count = v.attempt_number)
      AND EXISTS (SELECT 1 FROM submission_attempts AS a
                  WHERE a.intent_id = v.intent_id AND a.attempt_number = v.attempt_number
                    AND a.finished_at IS NULL);
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
    FROM dbo.submission_finish_intent_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND submission_intents.intent_id = v.intent_id
      AND @applied LIKE N'%,' + CAST(v.ord AS nvarchar(11)) + N',%';
    UPDATE submission_attempts
    SET finished_at = v.finished_at,
        outcome_status = v.outcome_status,
        outcome_reason = v.outcome_reason,
        message_id = v.message_id,
        error = v.error,
        sent = v.sent
    FROM dbo.submission_finish_attempt_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND submission_attempts.intent_id = v.intent_id
      AND submission_attempts.attempt_number = v.attempt_number
      AND @applied LIKE N'%,' + CAST(v.ord AS nvarchar(11)) + N',%';
    COMMIT TRANSACTION;
    SELECT v.ord,
           CASE WHEN @applied LIKE N'%,' + CAST(v.ord AS nvarchar(11)) + N',%' THEN 0
                WHEN EXISTS (SELECT 1 FROM submission_intents AS t WHERE t.intent_id = v.intent_id) THEN 1
                ELSE 2 END AS verdict
    FROM dbo.submission_start_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647;
END;
-- +goose StatementEnd

DROP FUNCTION dbo.submission_finish_items;

-- +goose Down
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

DROP PROCEDURE dbo.submission_finish_attempts;

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
    --
    -- The first UPDATE changes nothing: it locks the intents that may
    -- apply, so that the items found to apply (@applied, their positions
    -- as ",0,3," matched with LIKE: see the header) stay so until the
    -- commit, whoever else writes those intents meanwhile. The statements
    -- that need only an item's position, intentId and attempt number read
    -- them through submission_start_items, which reads those members of
    -- the same JSON (and a started_at it does not have, as NULL), rather
    -- than every member through submission_finish_items (see the header).
    SET NOCOUNT ON;
    SET XACT_ABORT ON;
    DECLARE @lock_status int, @now datetime2(7), @applied nvarchar(max);
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
    SET attempt_count = submission_intents.attempt_count
    FROM dbo.submission_start_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND submission_intents.intent_id = v.intent_id
      AND submission_intents.status = 'pending'
      AND submission_intents.attempt_count = v.attempt_number;
    SELECT @applied = N',' + STRING_AGG(CAST(v.ord AS nvarchar(max)), N',') + N','
    FROM dbo.submission_start_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND EXISTS (SELECT 1 FROM submission_intents AS t
                  WHERE t.intent_id = v.intent_id AND t.status = 'pending' AND t.attempt_count = v.attempt_number)
      AND EXISTS (SELECT 1 FROM submission_attempts AS a
                  WHERE a.intent_id = v.intent_id AND a.attempt_number = v.attempt_number
                    AND a.finished_at IS NULL);
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
    FROM dbo.submission_finish_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND submission_intents.intent_id = v.intent_id
      AND @applied LIKE N'%,' + CAST(v.ord AS nvarchar(11)) + N',%';
    UPDATE submission_attempts
    SET finished_at = v.finished_at,
        outcome_status = v.outcome_status,
        outcome_reason = v.outcome_reason,
        message_id = v.message_id,
        error = v.error,
        sent = v.sent
    FROM dbo.submission_finish_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND submission_attempts.intent_id = v.intent_id
      AND submission_attempts.attempt_number = v.attempt_number
      AND @applied LIKE N'%,' + CAST(v.ord AS nvarchar(11)) + N',%';
    COMMIT TRANSACTION;
    SELECT v.ord,
           CASE WHEN @applied LIKE N'%,' + CAST(v.ord AS nvarchar(11)) + N',%' THEN 0
                WHEN EXISTS (SELECT 1 FROM submission_intents AS t WHERE t.intent_id = v.intent_id) THEN 1
                ELSE 2 END AS verdict
    FROM dbo.submission_start_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647;
END;
-- +goose StatementEnd

DROP FUNCTION dbo.submission_finish_intent_items;
DROP FUNCTION dbo.submission_finish_attempt_items;

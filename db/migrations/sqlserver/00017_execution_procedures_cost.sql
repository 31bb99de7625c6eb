-- The executor's procedures (00014, and 00015's reads of many intents),
-- rewritten for what they cost the database server on Babelfish, where
-- a backlog's execution spent 3 to 4 ms of server CPU per attempt:
--
--   * No table variable. On Babelfish a procedure that declares one costs
--     about 6 ms more per call (measured: DECLARE @t TABLE and SELECT 1,
--     6.2 ms a call against 0.5 ms without), most of it the T-SQL parser
--     run again, and the two batches declared one each. The items that a
--     batch wrote are now found by a query and kept as their positions in
--     a string; each procedure says why that query finds exactly them.
--   * The planner told that a batch is small. A table-valued function is
--     a PL/tsql function on Babelfish that PostgreSQL cannot inline, so
--     its rows are estimated at 1,000 whatever the batch holds, and each
--     join of the items to submission_attempts (and, as it grows, to
--     submission_intents) was planned as a hash join over a scan of the
--     whole table, a cost that grew with the table. Each use of the items
--     (or of the intentIds) now carries a range predicate that always
--     holds: an item's position between 0 and the largest int, a key's
--     length between 0 and 255. PostgreSQL estimates a closed range on a
--     value it has no statistics for at 0.5% of the rows, so the joins
--     are planned as index lookups by key, as SQL Server plans them from
--     its own estimate; SQL Server reads the predicates as the no-ops they
--     are.
--
-- The Down section restores the procedures of 00014 and 00015.

-- +goose Up
DROP PROCEDURE dbo.submission_start_attempts;
DROP PROCEDURE dbo.submission_finish_attempts;
DROP PROCEDURE dbo.submission_get_intents;
DROP PROCEDURE dbo.submission_attempts_of;

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
    --
    -- The items this call counted are those of a number of 1 or more
    -- whose intent is now pending at count number without an attempt row
    -- of that number: every other writer of a count inserts its attempt
    -- row in the same transaction, and the counted rows stay locked until
    -- the commit. @reserved holds
    -- their positions as ",0,3,", not a table variable (see above).
    SET NOCOUNT ON;
    SET XACT_ABORT ON;
    DECLARE @lock_status int, @now datetime2(7), @reserved nvarchar(max);
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
    -- and an UPDATE names its target table only as its target (repeated in
    -- FROM, it hides FROM's other tables from SET there).
    UPDATE submission_intents
    SET attempt_count = submission_intents.attempt_count + 1,
        last_modified_at = CASE WHEN @now > submission_intents.last_modified_at THEN @now
                                ELSE DATEADD(nanosecond, 100, submission_intents.last_modified_at) END
    FROM dbo.submission_start_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND submission_intents.intent_id = v.intent_id
      AND submission_intents.status = 'pending'
      AND submission_intents.attempt_count = v.attempt_number - 1;
    SELECT @reserved = N',' + STRING_AGG(CAST(v.ord AS nvarchar(max)), N',') + N','
    FROM dbo.submission_start_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND v.attempt_number >= 1
      AND EXISTS (SELECT 1 FROM submission_intents AS t
                  WHERE t.intent_id = v.intent_id AND t.status = 'pending' AND t.attempt_count = v.attempt_number)
      AND NOT EXISTS (SELECT 1 FROM submission_attempts AS a
                      WHERE a.intent_id = v.intent_id AND a.attempt_number = v.attempt_number);
    INSERT INTO submission_attempts (intent_id, attempt_number, holder_id, lease_epoch, started_at, sent)
    SELECT v.intent_id, v.attempt_number, @holder_id, @lease_epoch, v.started_at, 1
    FROM dbo.submission_start_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND CHARINDEX(N',' + CAST(v.ord AS nvarchar(11)) + N',', @reserved) > 0;
    COMMIT TRANSACTION;
    SELECT v.ord,
           CASE WHEN CHARINDEX(N',' + CAST(v.ord AS nvarchar(11)) + N',', @reserved) > 0 THEN 0
                WHEN EXISTS (SELECT 1 FROM submission_intents AS t WHERE t.intent_id = v.intent_id) THEN 1
                ELSE 2 END AS verdict
    FROM dbo.submission_start_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647;
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
    --
    -- The first UPDATE changes nothing: it locks the intents that may
    -- apply, so that the items found to apply (@applied, their positions
    -- as ",0,3,", not a table variable: see above) stay so until the
    -- commit, whoever else writes those intents meanwhile.
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
    FROM dbo.submission_finish_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND submission_intents.intent_id = v.intent_id
      AND submission_intents.status = 'pending'
      AND submission_intents.attempt_count = v.attempt_number;
    SELECT @applied = N',' + STRING_AGG(CAST(v.ord AS nvarchar(max)), N',') + N','
    FROM dbo.submission_finish_items(@items) AS v
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
      AND CHARINDEX(N',' + CAST(v.ord AS nvarchar(11)) + N',', @applied) > 0;
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
      AND CHARINDEX(N',' + CAST(v.ord AS nvarchar(11)) + N',', @applied) > 0;
    COMMIT TRANSACTION;
    SELECT v.ord,
           CASE WHEN CHARINDEX(N',' + CAST(v.ord AS nvarchar(11)) + N',', @applied) > 0 THEN 0
                WHEN EXISTS (SELECT 1 FROM submission_intents AS t WHERE t.intent_id = v.intent_id) THEN 1
                ELSE 2 END AS verdict
    FROM dbo.submission_finish_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647;
END;
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
    WHERE intent_id IN (SELECT v.intent_id COLLATE Latin1_General_100_BIN2 FROM dbo.submission_intent_ids(@ids) AS v
                        WHERE LEN(v.intent_id) BETWEEN 0 AND 255);
    SELECT intent_id, attempt_number, started_at, finished_at, outcome_status,
           outcome_reason, message_id, error, sent, holder_id, lease_epoch
    FROM submission_attempts
    WHERE intent_id IN (SELECT v.intent_id COLLATE Latin1_General_100_BIN2 FROM dbo.submission_intent_ids(@ids) AS v
                        WHERE LEN(v.intent_id) BETWEEN 0 AND 255)
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
    WHERE intent_id IN (SELECT v.intent_id COLLATE Latin1_General_100_BIN2 FROM dbo.submission_intent_ids(@ids) AS v
                        WHERE LEN(v.intent_id) BETWEEN 0 AND 255)
    ORDER BY intent_id, attempt_number;
END;
-- +goose StatementEnd

-- +goose Down
DROP PROCEDURE dbo.submission_start_attempts;
DROP PROCEDURE dbo.submission_finish_attempts;
DROP PROCEDURE dbo.submission_get_intents;
DROP PROCEDURE dbo.submission_attempts_of;

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

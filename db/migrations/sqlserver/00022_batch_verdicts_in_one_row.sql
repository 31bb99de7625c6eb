-- The executor's two fenced batches (00018) answer their verdicts without
-- reading their items once more. Each ended, after its commit, with a
-- SELECT of one row per item (its position and 0, 1 or 2): a read of all
-- the items through submission_start_items and, for each item not
-- written, a lookup of its intent. That read was one of four in a batch
-- of reservations and one of five in a batch of results, and on Babelfish
-- every read of the items costs per item and per member (OPENJSON ...
-- WITH builds each member of each item as a string before it makes the
-- rows). Now the read that finds the items to write finds the items whose
-- intent does not exist as well, by outer joins, and the batch answers
-- one row: the positions of the items it wrote and of those missing, in
-- the form it already kept its positions in (",0,3,"); the adapter reads
-- every other item of the batch as not runnable (attempts_batch.go).
-- One session alternating these procedures with 00018's on one Babelfish
-- database, reservations and then results of the same number of items,
-- spent 0.45-0.48 ms of the server's CPU per attempt against 0.50-0.54 at
-- 250 items a call, 0.24 against 0.25 at 64 and 0.36 against 0.38 at 16.
--
-- Everything else is as 00018 wrote it, and so are the semantics: the
-- fence, each item all or nothing, one verdict per item. A missing
-- intent is now found before the commit rather than after it, which is
-- the same answer, as intents are never deleted. The Down section
-- restores 00018's procedures.

-- +goose Up
DROP PROCEDURE dbo.submission_start_attempts;
DROP PROCEDURE dbo.submission_finish_attempts;

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
    -- moves strictly forward, as in every intent update. Answers one row:
    -- the positions (ord) of the items it reserved, and of those whose
    -- intent does not exist, each as ",0,3," or NULL for none; every other
    -- item is not runnable. Throws 51001 when the lease lock is not granted
    -- and 51000 when the fence does not hold; XACT_ABORT then rolls
    -- everything back.
    --
    -- The items this call counted are those of a number of 1 or more
    -- whose intent is now pending at count number without an attempt row
    -- of that number: every other writer of a count inserts its attempt
    -- row in the same transaction, and the counted rows stay locked until
    -- the commit. One read of the items finds them and the missing intents
    -- together, by outer joins (SQL Server allows no subquery inside an
    -- aggregate); the positions are matched with LIKE (see the header).
    SET NOCOUNT ON;
    SET XACT_ABORT ON;
    DECLARE @lock_status int, @now datetime2(7), @reserved nvarchar(max), @missing nvarchar(max);
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
    SELECT @reserved = N',' + STRING_AGG(CASE WHEN v.attempt_number >= 1 AND t.status = 'pending'
                                                   AND t.attempt_count = v.attempt_number AND a.intent_id IS NULL
                                              THEN CAST(v.ord AS nvarchar(max)) END, N',') + N',',
           @missing = N',' + STRING_AGG(CASE WHEN t.intent_id IS NULL
                                             THEN CAST(v.ord AS nvarchar(max)) END, N',') + N','
    FROM dbo.submission_start_items(@items) AS v
    LEFT JOIN submission_intents AS t ON t.intent_id = v.intent_id
    LEFT JOIN submission_attempts AS a ON a.intent_id = v.intent_id AND a.attempt_number = v.attempt_number
    WHERE v.ord BETWEEN 0 AND 2147483647;
    INSERT INTO submission_attempts (intent_id, attempt_number, holder_id, lease_epoch, started_at, sent)
    SELECT v.intent_id, v.attempt_number, @holder_id, @lease_epoch, v.started_at, 1
    FROM dbo.submission_start_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND @reserved LIKE N'%,' + CAST(v.ord AS nvarchar(11)) + N',%';
    COMMIT TRANSACTION;
    SELECT @reserved AS applied, @missing AS missing;
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
    -- submission_start_attempts does, the positions of the items it
    -- applied first.
    --
    -- The first UPDATE changes nothing: it locks the intents that may
    -- apply, so that the items found to apply (@applied, their positions
    -- as ",0,3," matched with LIKE: see the header) stay so until the
    -- commit, whoever else writes those intents meanwhile. The statements
    -- that need only an item's position, intentId and attempt number read
    -- them through submission_start_items, which reads those members of
    -- the same JSON (and a started_at it does not have, as NULL), rather
    -- than every member through submission_finish_items.
    SET NOCOUNT ON;
    SET XACT_ABORT ON;
    DECLARE @lock_status int, @now datetime2(7), @applied nvarchar(max), @missing nvarchar(max);
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
    SELECT @applied = N',' + STRING_AGG(CASE WHEN t.status = 'pending' AND t.attempt_count = v.attempt_number
                                                  AND a.intent_id IS NOT NULL AND a.finished_at IS NULL
                                             THEN CAST(v.ord AS nvarchar(max)) END, N',') + N',',
           @missing = N',' + STRING_AGG(CASE WHEN t.intent_id IS NULL
                                             THEN CAST(v.ord AS nvarchar(max)) END, N',') + N','
    FROM dbo.submission_start_items(@items) AS v
    LEFT JOIN submission_intents AS t ON t.intent_id = v.intent_id
    LEFT JOIN submission_attempts AS a ON a.intent_id = v.intent_id AND a.attempt_number = v.attempt_number
    WHERE v.ord BETWEEN 0 AND 2147483647;
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
    SELECT @applied AS applied, @missing AS missing;
END;
-- +goose StatementEnd

-- +goose Down
DROP PROCEDURE dbo.submission_start_attempts;
DROP PROCEDURE dbo.submission_finish_attempts;

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
    -- the commit. @reserved holds their positions as ",0,3,", not a
    -- table variable, matched with LIKE, not CHARINDEX (see the header).
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
      AND @reserved LIKE N'%,' + CAST(v.ord AS nvarchar(11)) + N',%';
    COMMIT TRANSACTION;
    SELECT v.ord,
           CASE WHEN @reserved LIKE N'%,' + CAST(v.ord AS nvarchar(11)) + N',%' THEN 0
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

-- The test of the stored intentIds in the batch insert (00016, as 00018
-- wrote it) and the tests of the attempts in the executor's reservations
-- and results (00018) as subqueries with a row offset, so that each looks
-- its items up by key whatever the server's estimates. This is for what
-- Babelfish made of them once its sessions were kept between uses
-- (adapters/sqlserver/keepsession.go):
--
--   * PostgreSQL turns a plain EXISTS or NOT EXISTS into a join, and
--     chooses between hashing the whole table and looking each item up by
--     the table's size when it plans, against its guess of 1,000 items for
--     any table function. A session that calls a procedure a sixth time
--     keeps a generic plan of each statement until an ANALYZE of a table it
--     reads; a session reset at every use planned each call again. In a
--     database that grows fast from empty, as the benchmarks' do, kept
--     plans were made for tables of a few hundred rows: the batch insert
--     hashed the whole of submission_intents for each batch (60,840 rows
--     at 60,000 inserted, planned for 848: 90 ms a batch), and the
--     results' test of their open attempts scanned submission_attempts
--     for each batch. Bulk intake through the service fell from about
--     11,900 to 8,100-8,700 intents/s.
--   * PostgreSQL never turns a subquery with a row offset into a join
--     (OFFSET 0 ROWS changes nothing else; 00016 uses it so too), so each
--     test runs per item as a lookup of the primary key, which is the plan
--     for one row in any table of more than a few pages. A plan made while
--     a table has only a few pages may scan it per item instead; the
--     adapter resets a kept session once its plans are ten seconds old, so
--     no plan outlives such a start by long. On SQL Server the ORDER BY and
--     OFFSET change nothing that a test answers.
--   * The tests of the intents in the reservations and results stay as
--     they were: in the plans logged over a drained backlog and over
--     intake with execution on a new database, they were index lookups.
--
-- Everything else is as 00018 wrote it, and the Down section restores it.

-- +goose Up
DROP PROCEDURE dbo.submission_start_attempts;
DROP PROCEDURE dbo.submission_finish_attempts;
DROP PROCEDURE dbo.submission_insert_intents;

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
    -- The test of the attempts carries OFFSET 0 ROWS so that PostgreSQL
    -- looks each item's up by key rather than joining on sizes it saw once
    -- (00020).
    SELECT @reserved = N',' + STRING_AGG(CAST(v.ord AS nvarchar(max)), N',') + N','
    FROM dbo.submission_start_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND v.attempt_number >= 1
      AND EXISTS (SELECT 1 FROM submission_intents AS t
                  WHERE t.intent_id = v.intent_id AND t.status = 'pending' AND t.attempt_count = v.attempt_number)
      AND NOT EXISTS (SELECT 1 FROM submission_attempts AS a
                      WHERE a.intent_id = v.intent_id AND a.attempt_number = v.attempt_number
                      ORDER BY a.intent_id OFFSET 0 ROWS);
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
    -- The test of the attempts carries OFFSET 0 ROWS so that PostgreSQL
    -- looks each item's up by key rather than joining on sizes it saw once
    -- (00020).
    SELECT @applied = N',' + STRING_AGG(CAST(v.ord AS nvarchar(max)), N',') + N','
    FROM dbo.submission_start_items(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND EXISTS (SELECT 1 FROM submission_intents AS t
                  WHERE t.intent_id = v.intent_id AND t.status = 'pending' AND t.attempt_count = v.attempt_number)
      AND EXISTS (SELECT 1 FROM submission_attempts AS a
                  WHERE a.intent_id = v.intent_id AND a.attempt_number = v.attempt_number
                    AND a.finished_at IS NULL
                  ORDER BY a.intent_id OFFSET 0 ROWS);
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
    FROM (SELECT CAST(CASE WHEN k.intent_id LIKE N'%~%' THEN dbo.submission_json_text(k.intent_id)
                           ELSE k.intent_id END AS nvarchar(255)) AS intent_id,
                 CAST(CASE WHEN k.submission_target LIKE N'%~%' THEN dbo.submission_json_text(k.submission_target)
                           ELSE k.submission_target END AS nvarchar(255)) AS submission_target,
                 CAST(CAST(CASE WHEN k.payload LIKE N'%~%' THEN dbo.submission_json_text(k.payload)
                                ELSE k.payload END COLLATE Latin1_General_100_BIN2
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
    -- OFFSET 0 ROWS: a lookup of each item's key at any table size (00020).
    WHERE NOT EXISTS (SELECT 1 FROM submission_intents AS s WHERE s.intent_id = v.intent_id
                      ORDER BY s.intent_id OFFSET 0 ROWS);
    -- Every item's row, stored now or before, with its facts, then the
    -- attempts of those rows, each intent's in order, each distinct
    -- intentId looked up by key as dbo.submission_get_intents looks it up.
    SELECT t.intent_id, t.submission_target, t.payload, t.contract, t.status, t.created_at,
           t.next_due_at, t.attempt_count, t.final_outcome_status, t.final_outcome_reason,
           t.final_message_id, t.exhausted_reason, t.last_modified_at, t.not_before, t.trace_parent,
           t.possibly_accepted, t.accepted_after_deadline, t.accepted_message_id
    FROM (SELECT DISTINCT v.intent_id COLLATE Latin1_General_100_BIN2 AS intent_id
          FROM dbo.submission_intent_ids(@ids) AS v) AS i
    CROSS APPLY (SELECT TOP (1) s.intent_id, s.submission_target, s.payload, s.contract, s.status, s.created_at,
                        s.next_due_at, s.attempt_count, s.final_outcome_status, s.final_outcome_reason,
                        s.final_message_id, s.exhausted_reason, s.last_modified_at, s.not_before, s.trace_parent,
                        s.possibly_accepted, s.accepted_after_deadline, s.accepted_message_id
                 FROM submission_intents AS s WHERE s.intent_id = i.intent_id) AS t;
    SELECT a.intent_id, a.attempt_number, a.started_at, a.finished_at, a.outcome_status,
           a.outcome_reason, a.message_id, a.error, a.sent, a.holder_id, a.lease_epoch
    FROM (SELECT DISTINCT v.intent_id COLLATE Latin1_General_100_BIN2 AS intent_id
          FROM dbo.submission_intent_ids(@ids) AS v) AS i
    CROSS APPLY (SELECT TOP (2147483647) s.intent_id, s.attempt_number, s.started_at, s.finished_at, s.outcome_status,
                        s.outcome_reason, s.message_id, s.error, s.sent, s.holder_id, s.lease_epoch
                 FROM submission_attempts AS s WHERE s.intent_id = i.intent_id) AS a
    ORDER BY a.intent_id, a.attempt_number;
END;
-- +goose StatementEnd

-- +goose Down
DROP PROCEDURE dbo.submission_start_attempts;
DROP PROCEDURE dbo.submission_finish_attempts;
DROP PROCEDURE dbo.submission_insert_intents;

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
    FROM (SELECT CAST(CASE WHEN k.intent_id LIKE N'%~%' THEN dbo.submission_json_text(k.intent_id)
                           ELSE k.intent_id END AS nvarchar(255)) AS intent_id,
                 CAST(CASE WHEN k.submission_target LIKE N'%~%' THEN dbo.submission_json_text(k.submission_target)
                           ELSE k.submission_target END AS nvarchar(255)) AS submission_target,
                 CAST(CAST(CASE WHEN k.payload LIKE N'%~%' THEN dbo.submission_json_text(k.payload)
                                ELSE k.payload END COLLATE Latin1_General_100_BIN2
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
    -- attempts of those rows, each intent's in order, each distinct
    -- intentId looked up by key as dbo.submission_get_intents looks it up.
    SELECT t.intent_id, t.submission_target, t.payload, t.contract, t.status, t.created_at,
           t.next_due_at, t.attempt_count, t.final_outcome_status, t.final_outcome_reason,
           t.final_message_id, t.exhausted_reason, t.last_modified_at, t.not_before, t.trace_parent,
           t.possibly_accepted, t.accepted_after_deadline, t.accepted_message_id
    FROM (SELECT DISTINCT v.intent_id COLLATE Latin1_General_100_BIN2 AS intent_id
          FROM dbo.submission_intent_ids(@ids) AS v) AS i
    CROSS APPLY (SELECT TOP (1) s.intent_id, s.submission_target, s.payload, s.contract, s.status, s.created_at,
                        s.next_due_at, s.attempt_count, s.final_outcome_status, s.final_outcome_reason,
                        s.final_message_id, s.exhausted_reason, s.last_modified_at, s.not_before, s.trace_parent,
                        s.possibly_accepted, s.accepted_after_deadline, s.accepted_message_id
                 FROM submission_intents AS s WHERE s.intent_id = i.intent_id) AS t;
    SELECT a.intent_id, a.attempt_number, a.started_at, a.finished_at, a.outcome_status,
           a.outcome_reason, a.message_id, a.error, a.sent, a.holder_id, a.lease_epoch
    FROM (SELECT DISTINCT v.intent_id COLLATE Latin1_General_100_BIN2 AS intent_id
          FROM dbo.submission_intent_ids(@ids) AS v) AS i
    CROSS APPLY (SELECT TOP (2147483647) s.intent_id, s.attempt_number, s.started_at, s.finished_at, s.outcome_status,
                        s.outcome_reason, s.message_id, s.error, s.sent, s.holder_id, s.lease_epoch
                 FROM submission_attempts AS s WHERE s.intent_id = i.intent_id) AS a
    ORDER BY a.intent_id, a.attempt_number;
END;
-- +goose StatementEnd

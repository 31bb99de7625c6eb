-- The executor's batches (00022) travel as rows of text rather than as
-- JSON. Babelfish's OPENJSON ... WITH reads each column of each item for
-- about 5-8 microseconds of the server's CPU (a JSON path read again for
-- every column of every row), and a result's item had twenty columns,
-- read in two of its batch's statements: about 0.3 ms of the server's
-- CPU per result, and 0.1 per reservation, the most of what an executed
-- attempt cost Babelfish. STRING_SPLIT, SUBSTRING and CAST, which it
-- runs natively, read the same rows for well under a microsecond a column
-- (docs/sqlserver.md, "The executor's batches as rows", has the figures).
-- SQL Server reads either way; STRING_SPLIT needs compatibility level 130
-- or more there (2016 and later; 160 is 2022's default).
--
-- A batch is one nvarchar(max) of rows, each ended by NCHAR(30) (the
-- record separator), which no text of a row holds: the adapter spells
-- every control character of a text (jsontext.go), and an item with a
-- spelled text says so, as before. Every row begins with its kind and the
-- item's position in the batch (ord), then fixed-width columns, then the
-- one text the row carries, to its end (attempts_rows.go writes them):
--
--   "i" ord(10) attempt_number(10) time(27) spelled(1) text_at(3) ...
--       the intentId from position text_at to the row's end; between
--       them, in a result's row: next_due_at(27) sent(1)
--       possibly_accepted(1) accepted_after_deadline(1) status(16)
--       outcome_status(16) final_outcome_status(16) exhausted_reason(32);
--   "t" ord(10) code(1) text: one of a result's texts, by its code
--       (r outcome_reason, m message_id, e error, f final_outcome_reason,
--       g final_message_id, a accepted_message_id; none differ only in
--       case, as the database's collation may not tell case apart). An
--       absent text has no row and reads as NULL, as an empty one did.
--
-- A blank fixed-width column is NULL; times are ISO 8601 to 100 ns, in
-- UTC. STRING_SPLIT answers rows in no promised order, which nothing
-- here needs: a row is matched to its item by ord. On Babelfish its
-- column is varchar, holding the text's characters unchanged (UTF-8
-- underneath), so every text is cast to nvarchar before it is used.
-- A text is read whole on both servers; OPENJSON WITH cut those over
-- 4,000 code units short on Babelfish, which the JSON's "long" member
-- worked around and these rows need not.
--
-- The procedures are 00022's, reading these functions in place of
-- submission_start_items and submission_finish_items, which are
-- dropped. The Down section restores 00022's procedures and those
-- functions, for items in JSON.

-- +goose Up
DROP PROCEDURE dbo.submission_start_attempts;
DROP PROCEDURE dbo.submission_finish_attempts;
DROP FUNCTION dbo.submission_start_items;
DROP FUNCTION dbo.submission_finish_items;

-- +goose StatementBegin
CREATE FUNCTION dbo.submission_batch_keys (@items nvarchar(max))
RETURNS TABLE
AS
RETURN (
    -- Each item's position, intentId (read back from its spelling when
    -- the item was spelled; in the key columns' binary collation, so that
    -- "a" and "A" are two intents), attempt number and time (the
    -- reservation's start, the result's finish).
    SELECT CAST(SUBSTRING(r.value, 2, 10) AS int) AS ord,
           CAST(CASE WHEN SUBSTRING(r.value, 49, 1) = '0'
                     THEN CAST(SUBSTRING(r.value, CAST(SUBSTRING(r.value, 50, 3) AS int), 2147483647) AS nvarchar(max))
                     ELSE dbo.submission_json_text(CAST(SUBSTRING(r.value, CAST(SUBSTRING(r.value, 50, 3) AS int), 2147483647)
                                                        AS nvarchar(max))) END
                AS nvarchar(255)) COLLATE Latin1_General_100_BIN2 AS intent_id,
           CAST(SUBSTRING(r.value, 12, 10) AS int) AS attempt_number,
           CAST(SUBSTRING(r.value, 22, 27) AS datetime2(7)) AS at
    FROM STRING_SPLIT(@items, NCHAR(30)) AS r
    WHERE r.value LIKE N'i%'
);
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION dbo.submission_batch_results (@items nvarchar(max))
RETURNS TABLE
AS
RETURN (
    -- Each result's columns: its item's keys, the fixed-width columns of
    -- its row, and its texts, each read back from its spelling when the
    -- item was spelled.
    SELECT k.ord, k.intent_id, k.attempt_number, k.at AS finished_at,
           CAST(NULLIF(RTRIM(SUBSTRING(i.value, 99, 16)), '') AS varchar(16)) AS outcome_status,
           CASE WHEN i.spelled = '0' THEN x.outcome_reason ELSE dbo.submission_json_text(x.outcome_reason) END AS outcome_reason,
           CASE WHEN i.spelled = '0' THEN x.message_id ELSE dbo.submission_json_text(x.message_id) END AS message_id,
           CASE WHEN i.spelled = '0' THEN x.error ELSE dbo.submission_json_text(x.error) END AS error,
           CAST(SUBSTRING(i.value, 80, 1) AS bit) AS sent,
           CAST(NULLIF(RTRIM(SUBSTRING(i.value, 83, 16)), '') AS varchar(16)) AS status,
           CAST(NULLIF(RTRIM(SUBSTRING(i.value, 53, 27)), '') AS datetime2(7)) AS next_due_at,
           CAST(NULLIF(RTRIM(SUBSTRING(i.value, 115, 16)), '') AS varchar(16)) AS final_outcome_status,
           CASE WHEN i.spelled = '0' THEN x.final_outcome_reason ELSE dbo.submission_json_text(x.final_outcome_reason) END
               AS final_outcome_reason,
           CASE WHEN i.spelled = '0' THEN x.final_message_id ELSE dbo.submission_json_text(x.final_message_id) END
               AS final_message_id,
           CAST(NULLIF(RTRIM(SUBSTRING(i.value, 131, 32)), '') AS varchar(32)) AS exhausted_reason,
           CAST(SUBSTRING(i.value, 81, 1) AS bit) AS possibly_accepted,
           CAST(SUBSTRING(i.value, 82, 1) AS bit) AS accepted_after_deadline,
           CASE WHEN i.spelled = '0' THEN x.accepted_message_id ELSE dbo.submission_json_text(x.accepted_message_id) END
               AS accepted_message_id
    FROM dbo.submission_batch_keys(@items) AS k
    JOIN (SELECT CAST(SUBSTRING(r.value, 2, 10) AS int) AS ord, SUBSTRING(r.value, 49, 1) AS spelled, r.value
          FROM STRING_SPLIT(@items, NCHAR(30)) AS r
          WHERE r.value LIKE N'i%') AS i ON i.ord = k.ord
    LEFT JOIN (
        SELECT t.ord,
               MAX(CASE WHEN t.code = 'r' THEN t.text END) AS outcome_reason,
               MAX(CASE WHEN t.code = 'm' THEN t.text END) AS message_id,
               MAX(CASE WHEN t.code = 'e' THEN t.text END) AS error,
               MAX(CASE WHEN t.code = 'f' THEN t.text END) AS final_outcome_reason,
               MAX(CASE WHEN t.code = 'g' THEN t.text END) AS final_message_id,
               MAX(CASE WHEN t.code = 'a' THEN t.text END) AS accepted_message_id
        FROM (SELECT CAST(SUBSTRING(r.value, 2, 10) AS int) AS ord, SUBSTRING(r.value, 12, 1) AS code,
                     CAST(SUBSTRING(r.value, 13, 2147483647) AS nvarchar(max)) AS text
              FROM STRING_SPLIT(@items, NCHAR(30)) AS r
              WHERE r.value LIKE N't%') AS t
        GROUP BY t.ord) AS x ON x.ord = k.ord
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
    -- aggregate); the positions are matched with LIKE (migration 00018 says why).
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
    FROM dbo.submission_batch_keys(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND submission_intents.intent_id = v.intent_id
      AND submission_intents.status = 'pending'
      AND submission_intents.attempt_count = v.attempt_number - 1;
    SELECT @reserved = N',' + STRING_AGG(CASE WHEN v.attempt_number >= 1 AND t.status = 'pending'
                                                   AND t.attempt_count = v.attempt_number AND a.intent_id IS NULL
                                              THEN CAST(v.ord AS nvarchar(max)) END, N',') + N',',
           @missing = N',' + STRING_AGG(CASE WHEN t.intent_id IS NULL
                                             THEN CAST(v.ord AS nvarchar(max)) END, N',') + N','
    FROM dbo.submission_batch_keys(@items) AS v
    LEFT JOIN submission_intents AS t ON t.intent_id = v.intent_id
    LEFT JOIN submission_attempts AS a ON a.intent_id = v.intent_id AND a.attempt_number = v.attempt_number
    WHERE v.ord BETWEEN 0 AND 2147483647;
    INSERT INTO submission_attempts (intent_id, attempt_number, holder_id, lease_epoch, started_at, sent)
    SELECT v.intent_id, v.attempt_number, @holder_id, @lease_epoch, v.at, 1
    FROM dbo.submission_batch_keys(@items) AS v
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
    -- as ",0,3," matched with LIKE: migration 00018 says why) stay so until the
    -- commit, whoever else writes those intents meanwhile. The statements
    -- that need only an item's position, intentId and attempt number read
    -- them through submission_batch_keys, rather than every column through
    -- submission_batch_results.
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
    FROM dbo.submission_batch_keys(@items) AS v
    WHERE v.ord BETWEEN 0 AND 2147483647
      AND submission_intents.intent_id = v.intent_id
      AND submission_intents.status = 'pending'
      AND submission_intents.attempt_count = v.attempt_number;
    SELECT @applied = N',' + STRING_AGG(CASE WHEN t.status = 'pending' AND t.attempt_count = v.attempt_number
                                                  AND a.intent_id IS NOT NULL AND a.finished_at IS NULL
                                             THEN CAST(v.ord AS nvarchar(max)) END, N',') + N',',
           @missing = N',' + STRING_AGG(CASE WHEN t.intent_id IS NULL
                                             THEN CAST(v.ord AS nvarchar(max)) END, N',') + N','
    FROM dbo.submission_batch_keys(@items) AS v
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
    FROM dbo.submission_batch_results(@items) AS v
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
    FROM dbo.submission_batch_results(@items) AS v
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
DROP FUNCTION dbo.submission_batch_results;
DROP FUNCTION dbo.submission_batch_keys;

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

-- A follower's acquire of an existing lease row in one round trip. It was
-- up to six: the expiry check, then, for a takeover, the transaction's
-- begin, the lease lock, the conditional UPDATE, the read-back and the
-- commit, or, for a lease that holds, a read of the row. On a database
-- server shared with other work each round trip waits for the server's
-- CPU, and a takeover comes that much later after the old lease expires
-- (adapters/sqlserver/lease.go; docs/sqlserver.md, "Round trips and statements").

-- +goose Up
-- +goose StatementBegin
CREATE PROCEDURE dbo.submission_acquire_lease
    @lease_name varchar(64), @holder_id varchar(128), @duration_ms int,
    @lock_resource nvarchar(255), @lock_timeout int, @rehearsal bit
AS
BEGIN
    -- Takes the lease over when it has expired in database time, and
    -- answers the row as it then is, with taken = 1 when this call took it
    -- and read_at, the database's clock at the read; no row when there is
    -- no lease of that name (the caller inserts it). The takeover takes the
    -- lease lock in IntentExclusive mode, which waits until every fenced
    -- transaction of the old epoch that passed its check has committed,
    -- and the UPDATE checks the expiry again under it: the holder may have
    -- renewed, or another follower taken over, meanwhile. A lease that
    -- holds is never locked, so followers' acquires cost the leader's
    -- writes nothing. A rehearsal (@rehearsal = 1, on a lease name no row
    -- has) runs the takeover's statements whatever the expiry, so that a
    -- follower's connection has them ready when it takes over; its UPDATE
    -- finds no row. Throws 51001 when the lease lock is not granted;
    -- XACT_ABORT then rolls the takeover back.
    SET NOCOUNT ON;
    SET XACT_ABORT ON;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    DECLARE @lock_status int, @taken int = 0, @now datetime2(7) = SYSUTCDATETIME();
    IF @rehearsal = 1 OR EXISTS (SELECT 1 FROM submission_manager_leases
        WHERE lease_name = @lease_name AND expires_at <= @now)
    BEGIN
        BEGIN TRANSACTION;
        EXEC @lock_status = sp_getapplock @Resource = @lock_resource, @LockMode = 'IntentExclusive',
            @LockOwner = 'Transaction', @LockTimeout = @lock_timeout;
        IF @lock_status < 0 THROW 51001, N'the lease lock was not granted', 1;
        SET @now = SYSUTCDATETIME();
        UPDATE submission_manager_leases
        SET holder_id = @holder_id,
            lease_epoch = lease_epoch + 1,
            acquired_at = @now,
            renewed_at = @now,
            expires_at = DATEADD(millisecond, @duration_ms, @now)
        WHERE lease_name = @lease_name AND expires_at <= @now;
        SET @taken = @@ROWCOUNT;
        COMMIT TRANSACTION;
    END;
    SELECT CAST(@taken AS int) AS taken, lease_name, holder_id, lease_epoch, acquired_at, renewed_at, expires_at,
           CAST(SYSUTCDATETIME() AS datetime2(7)) AS read_at
    FROM submission_manager_leases
    WHERE lease_name = @lease_name;
END;
-- +goose StatementEnd

-- +goose Down
DROP PROCEDURE dbo.submission_acquire_lease;

-- A follower's acquire of an existing row, taken over or not, is the
-- procedure dbo.submission_acquire_lease (migration 00021), called from
-- adapters/sqlserver/lease.go: one round trip where these statements took
-- up to six.
--
-- Every lease statement reads the database clock once, through the one-row
-- derived table "clock": separate SYSUTCDATETIME() calls in one statement
-- may differ by a tick, and acquired_at, renewed_at and expires_at must
-- agree. lease_name and holder_id are varchar columns (the lease spec's
-- types); their nvarchar Go parameters are cast to the column type to keep
-- seeks.

-- name: InsertLease :exec
-- The "row is missing" half of acquire. The primary key decides a race: the
-- loser gets error 2627 and reads the winner's row.
INSERT INTO submission_manager_leases (
    lease_name, holder_id, lease_epoch, acquired_at, renewed_at, expires_at
)
SELECT CAST(sqlc.arg(lease_name) AS varchar(64)),
       CAST(sqlc.arg(holder_id) AS varchar(128)),
       1,
       clock.now,
       clock.now,
       DATEADD(millisecond, CAST(sqlc.arg(duration_ms) AS int), clock.now)
FROM (SELECT SYSUTCDATETIME() AS now) AS clock;

-- RenewLease is written in adapters/sqlserver/lease.go (renewLeaseSQL): it
-- answers the renewed row through OUTPUT, which sqlc cannot parse.

-- name: ReleaseLease :execrows
-- Expiring the lease now lets the next acquire (expires_at <= now) win.
UPDATE submission_manager_leases
SET expires_at = clock.now
FROM (SELECT SYSUTCDATETIME() AS now) AS clock
WHERE lease_name = CAST(sqlc.arg(lease_name) AS varchar(64))
  AND holder_id = CAST(sqlc.arg(holder_id) AS varchar(128))
  AND lease_epoch = CAST(sqlc.arg(lease_epoch) AS bigint)
  AND expires_at > clock.now;

-- name: ReadLease :one
-- read_at is the database's now at the read, so a follower can wait out
-- expires_at - read_at on its own clock.
SELECT lease_name, holder_id, lease_epoch, acquired_at, renewed_at, expires_at,
       CAST(SYSUTCDATETIME() AS datetime2(7)) AS read_at
FROM submission_manager_leases
WHERE lease_name = CAST(sqlc.arg(lease_name) AS varchar(64));

-- name: FenceHolds :one
-- The fence check of every execution-state write. It runs inside the
-- write's READ COMMITTED transaction after the lease lock was taken in
-- Shared mode (adapters/sqlserver/fence.go): the lock, not this read, keeps
-- a takeover out until the write commits, and this read holds no lock a
-- renewal could wait for.
SELECT COUNT(*) AS holds
FROM submission_manager_leases
WHERE lease_name = CAST(sqlc.arg(lease_name) AS varchar(64))
  AND holder_id = CAST(sqlc.arg(holder_id) AS varchar(128))
  AND lease_epoch = CAST(sqlc.arg(lease_epoch) AS bigint)
  AND expires_at > SYSUTCDATETIME();

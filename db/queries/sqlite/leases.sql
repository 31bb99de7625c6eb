-- Leadership lease of the embedded SQLite store (spec: leader-lease.md).
-- Every comparison and every stored time is the database's own clock inside
-- the statement: CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000,
-- Unix nanoseconds at millisecond resolution, constant within one statement.

-- name: AcquireLease :one
-- One conditional statement: insert with epoch 1 when missing, take over only
-- when expired (epoch + 1, also for the same holder), otherwise no row.
INSERT INTO submission_manager_leases (lease_name, holder_id, lease_epoch, acquired_at, renewed_at, expires_at)
VALUES (
    sqlc.arg(lease_name), sqlc.arg(holder_id), 1,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000 + CAST(sqlc.arg(duration_ns) AS INTEGER))
ON CONFLICT (lease_name) DO UPDATE SET
    holder_id = excluded.holder_id,
    lease_epoch = submission_manager_leases.lease_epoch + 1,
    acquired_at = excluded.acquired_at,
    renewed_at = excluded.renewed_at,
    expires_at = excluded.expires_at
WHERE submission_manager_leases.expires_at <= excluded.acquired_at
RETURNING lease_name, holder_id, lease_epoch, acquired_at, renewed_at, expires_at;

-- name: RenewLease :one
UPDATE submission_manager_leases
SET renewed_at = CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000,
    expires_at = CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000 + CAST(sqlc.arg(duration_ns) AS INTEGER)
WHERE lease_name = sqlc.arg(lease_name) AND holder_id = sqlc.arg(holder_id)
  AND lease_epoch = sqlc.arg(lease_epoch)
  AND expires_at > CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000
RETURNING lease_name, holder_id, lease_epoch, acquired_at, renewed_at, expires_at;

-- name: ReleaseLease :execrows
UPDATE submission_manager_leases
SET expires_at = CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000
WHERE lease_name = sqlc.arg(lease_name) AND holder_id = sqlc.arg(holder_id)
  AND lease_epoch = sqlc.arg(lease_epoch)
  AND expires_at > CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000;

-- name: ReadLease :one
-- read_at is the database's now at the read, so a follower can wait out
-- expires_at - read_at on its own clock.
SELECT lease_name, holder_id, lease_epoch, acquired_at, renewed_at, expires_at,
       CAST(CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000 AS INTEGER) AS read_at
FROM submission_manager_leases
WHERE lease_name = sqlc.arg(lease_name);

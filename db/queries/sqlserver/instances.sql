-- Instances' heartbeats (SQL Server). Every time is SYSUTCDATETIME(), read
-- once per statement through the clock derived table, so that a starting
-- beat's started_at and last_seen_at are one instant. Not fenced: a beat
-- is not execution state. holder_id is compared with its parameter cast
-- to the column's type, so the key is sought, not converted.

-- name: UpdateInstance :execrows
UPDATE submission_instances
SET version = CAST(sqlc.arg(version) AS varchar(64)),
    role = CAST(sqlc.arg(role) AS varchar(16)),
    interval_ms = CAST(sqlc.arg(interval_ms) AS int),
    started_at = CASE WHEN CAST(sqlc.arg(starting) AS int) = 1 THEN clock.now
                      ELSE submission_instances.started_at END,
    last_seen_at = clock.now
FROM (SELECT SYSUTCDATETIME() AS now) AS clock
WHERE submission_instances.holder_id = CAST(sqlc.arg(holder_id) AS varchar(128));

-- name: InsertInstance :exec
-- Run when UpdateInstance found no row: the instance's first beat. Only
-- that instance writes its row, so nothing races it but a second process
-- under the same holder id, whose duplicate key the store answers by
-- updating instead.
INSERT INTO submission_instances (holder_id, version, role, interval_ms, started_at, last_seen_at)
SELECT CAST(sqlc.arg(holder_id) AS varchar(128)), CAST(sqlc.arg(version) AS varchar(64)),
       CAST(sqlc.arg(role) AS varchar(16)), CAST(sqlc.arg(interval_ms) AS int), clock.now, clock.now
FROM (SELECT SYSUTCDATETIME() AS now) AS clock;

-- name: ListInstances :many
-- seen_ago_us and holds_lease are judged at one reading of the clock.
SELECT i.holder_id, i.version, i.role, i.interval_ms, i.started_at, i.last_seen_at,
       CAST(DATEDIFF_BIG(microsecond, i.last_seen_at, clock.now) AS bigint) AS seen_ago_us,
       CAST(CASE WHEN EXISTS (SELECT 1 FROM submission_manager_leases AS l
                              WHERE l.lease_name = CAST(sqlc.arg(lease_name) AS varchar(64))
                                AND l.holder_id = i.holder_id
                                AND l.expires_at > clock.now)
                 THEN 1 ELSE 0 END AS int) AS holds_lease
FROM submission_instances AS i
CROSS JOIN (SELECT SYSUTCDATETIME() AS now) AS clock
ORDER BY i.holder_id;

-- name: RemoveInstance :execrows
DELETE FROM submission_instances
WHERE holder_id = CAST(sqlc.arg(holder_id) AS varchar(128));

-- name: ForgetInstances :execrows
DELETE FROM submission_instances
WHERE last_seen_at < DATEADD(millisecond, -CAST(sqlc.arg(not_seen_for_ms) AS int), SYSUTCDATETIME());

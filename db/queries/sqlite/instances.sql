-- Instances' heartbeats (embedded SQLite store). Every time here is
-- SQLite's own clock inside the statement, as the lease's:
-- CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000, Unix
-- nanoseconds at millisecond resolution. Not fenced: a beat is not
-- execution state.

-- name: BeatInstance :exec
-- A later beat of a running process keeps started_at.
INSERT INTO submission_instances (holder_id, version, role, interval_ms, started_at, last_seen_at)
VALUES (sqlc.arg(holder_id), sqlc.arg(version), sqlc.arg(role), sqlc.arg(interval_ms),
        CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000,
        CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000)
ON CONFLICT (holder_id) DO UPDATE SET
    version = excluded.version,
    role = excluded.role,
    interval_ms = excluded.interval_ms,
    last_seen_at = excluded.last_seen_at;

-- name: StartInstance :exec
-- A process's first beat sets started_at anew, also over a record an
-- earlier process under the same holder id left.
INSERT INTO submission_instances (holder_id, version, role, interval_ms, started_at, last_seen_at)
VALUES (sqlc.arg(holder_id), sqlc.arg(version), sqlc.arg(role), sqlc.arg(interval_ms),
        CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000,
        CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000)
ON CONFLICT (holder_id) DO UPDATE SET
    version = excluded.version,
    role = excluded.role,
    interval_ms = excluded.interval_ms,
    started_at = excluded.started_at,
    last_seen_at = excluded.last_seen_at;

-- name: ListInstances :many
-- seen_ago_ns and holds_lease are judged at one reading of the clock.
SELECT i.holder_id, i.version, i.role, i.interval_ms, i.started_at, i.last_seen_at,
       CAST(clock.now - i.last_seen_at AS INTEGER) AS seen_ago_ns,
       CAST(EXISTS (SELECT 1 FROM submission_manager_leases AS l
                    WHERE l.lease_name = sqlc.arg(lease_name) AND l.holder_id = i.holder_id
                      AND l.expires_at > clock.now) AS INTEGER) AS holds_lease
FROM submission_instances AS i
CROSS JOIN (SELECT CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000 AS now) AS clock
ORDER BY i.holder_id;

-- name: RemoveInstance :execrows
DELETE FROM submission_instances WHERE holder_id = sqlc.arg(holder_id);

-- name: ForgetInstances :execrows
DELETE FROM submission_instances
WHERE last_seen_at < CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000 - CAST(sqlc.arg(not_seen_for_ns) AS INTEGER);

-- Gateway pauses (embedded SQLite store). Not fenced: pausing is an
-- operator write, and it is idempotent.

-- name: InsertGatewayPause :exec
-- Pausing what is already paused changes nothing: the first paused_at stays.
INSERT INTO submission_gateway_pauses (selector_kind, selector, paused_at)
VALUES (sqlc.arg(selector_kind), sqlc.arg(selector), sqlc.arg(paused_at))
ON CONFLICT (selector_kind, selector) DO NOTHING;

-- name: GetGatewayPause :one
SELECT paused_at FROM submission_gateway_pauses
WHERE selector_kind = sqlc.arg(selector_kind) AND selector = sqlc.arg(selector);

-- name: ListGatewayPauses :many
-- Type pauses first ('type' sorts after 'url', hence the CASE), then by
-- selector: the order ports.PauseStore promises.
SELECT selector_kind, selector, paused_at FROM submission_gateway_pauses
ORDER BY CASE selector_kind WHEN 'type' THEN 0 ELSE 1 END, selector;

-- name: DeleteGatewayPause :execrows
DELETE FROM submission_gateway_pauses
WHERE selector_kind = sqlc.arg(selector_kind) AND selector = sqlc.arg(selector);

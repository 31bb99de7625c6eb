-- Gateway pauses (SQL Server). Not fenced: pausing is an operator write,
-- and it is idempotent.

-- name: InsertGatewayPause :exec
-- Fails with a duplicate key (2627) when the selector is already paused:
-- the caller then reads the stored pause, whose first paused_at stays.
INSERT INTO submission_gateway_pauses (selector_kind, selector, paused_at)
VALUES (CAST(sqlc.arg(selector_kind) AS varchar(4)), sqlc.arg(selector), SYSUTCDATETIME());

-- name: GetGatewayPause :one
SELECT paused_at FROM submission_gateway_pauses
WHERE selector_kind = CAST(sqlc.arg(selector_kind) AS varchar(4))
  AND selector = sqlc.arg(selector);

-- name: ListGatewayPauses :many
-- Type pauses first ('type' sorts after 'url', hence the CASE), then by
-- selector: the order ports.PauseStore promises.
SELECT selector_kind, selector, paused_at FROM submission_gateway_pauses
ORDER BY CASE selector_kind WHEN 'type' THEN 0 ELSE 1 END, selector;

-- name: DeleteGatewayPause :execrows
DELETE FROM submission_gateway_pauses
WHERE selector_kind = CAST(sqlc.arg(selector_kind) AS varchar(4))
  AND selector = sqlc.arg(selector);

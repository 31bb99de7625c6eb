-- Whether an attempt reached for the gateway is data, not a sentence: the
-- retry policy counts tries from this column, never from the error text.
--
-- An attempt in flight counts as sent: its reservation precedes the gateway
-- call, and after a crash nobody knows whether the call was made. Existing
-- rows are carried over by the one rule the service used before this
-- column: an attempt closed with the error text "not submitted: leadership
-- was lost before the gateway call" (the executor's NotSubmittedError) was
-- never sent; every other attempt, open or closed, was.

-- +goose Up
ALTER TABLE submission_attempts ADD COLUMN sent BOOLEAN NOT NULL DEFAULT 1 CHECK (sent IN (0, 1));
UPDATE submission_attempts SET sent = 0
WHERE finished_at IS NOT NULL
  AND error = 'not submitted: leadership was lost before the gateway call';

-- +goose Down
ALTER TABLE submission_attempts DROP COLUMN sent;

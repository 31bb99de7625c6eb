-- Whether an attempt reached for the gateway is data, not a sentence: the
-- retry policy counts tries from this column, never from the error text.
--
-- An attempt in flight counts as sent: its reservation precedes the gateway
-- call, and after a crash nobody knows whether the call was made. Existing
-- rows are carried over as the executor now writes them: an attempt closed
-- with one of its two "not submitted" texts (NotSubmittedError, the rule
-- the service counted tries by before this column, and DeadlinePassedError,
-- whose intent was exhausted without a call, so no try count changes) was
-- never sent; every other attempt, open or closed, was. goose sends each
-- statement as its own batch, so the UPDATE compiles after the column
-- exists.

-- +goose Up
ALTER TABLE submission_attempts ADD sent bit NOT NULL
    CONSTRAINT df_submission_attempts_sent DEFAULT 1;
UPDATE submission_attempts SET sent = 0
WHERE finished_at IS NOT NULL
  AND error IN (N'not submitted: leadership was lost before the gateway call',
                N'not submitted: the acceptance deadline had passed');

-- +goose Down
-- Babelfish ignores the default's name (it names defaults itself) and
-- drops them with their column, so the name is dropped where it exists.
IF OBJECT_ID('df_submission_attempts_sent', 'D') IS NOT NULL
    ALTER TABLE submission_attempts DROP CONSTRAINT df_submission_attempts_sent;
ALTER TABLE submission_attempts DROP COLUMN sent;

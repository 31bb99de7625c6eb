-- The resubmission links of many intents as a stored procedure, for the
-- reason 00014 and 00015 give: Babelfish parses a request's text at every
-- execution, and this read, which the service makes beside every GetIntent,
-- listing page and resubmission, was a statement naming its intentIds as a
-- VALUES table of parameters twice (about 0.1 ms to bind each, and text
-- that grew with the page). A procedure is parsed once. Like 00015's reads
-- it takes the intentIds as one JSON array of strings read by
-- dbo.submission_intent_ids, gives them the key columns' collation where it
-- uses them, and carries the range that always holds (00017 says why).

-- +goose Up
-- +goose StatementBegin
CREATE PROCEDURE dbo.submission_resubmission_links @ids nvarchar(max)
AS
BEGIN
    -- Reads the links (original, resubmission) that touch the intents
    -- among @ids from either end.
    SET NOCOUNT ON;
    SELECT intent_id, resubmitted_as
    FROM submission_resubmissions
    WHERE intent_id IN (SELECT v.intent_id COLLATE Latin1_General_100_BIN2 FROM dbo.submission_intent_ids(@ids) AS v
                        WHERE LEN(v.intent_id) BETWEEN 0 AND 255)
       OR resubmitted_as IN (SELECT v.intent_id COLLATE Latin1_General_100_BIN2 FROM dbo.submission_intent_ids(@ids) AS v
                             WHERE LEN(v.intent_id) BETWEEN 0 AND 255);
END;
-- +goose StatementEnd

-- +goose Down
DROP PROCEDURE dbo.submission_resubmission_links;

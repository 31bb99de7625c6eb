-- The resubmission links' foreign keys, on SQL Server only.
--
-- 00006_resubmissions.sql declared both links (intent_id and resubmitted_as)
-- as FOREIGN KEYs to submission_intents. Every column involved carries the
-- explicit collation Latin1_General_100_BIN2, and Babelfish for PostgreSQL
-- cannot use a FOREIGN KEY between explicitly collated columns: every insert
-- into submission_resubmissions fails there with "could not determine which
-- collation to use for string comparison". As 00002_attempts_intent_fk.sql
-- does for attempts, SERVERPROPERTY('Babelfish') (NULL on SQL Server) keeps
-- the keys on SQL Server and drops them on Babelfish. The store never relies
-- on them: CreateResubmission reads the ended original and inserts the new
-- intent in the transaction that inserts the link.
--
-- This file is T-SQL control flow that sqlc's parser rejects, so sqlc.yaml
-- leaves it out (it changes no column). Down puts the keys back where Up
-- took them away, so down-then-up returns to the same schema.

-- +goose Up
IF SERVERPROPERTY('Babelfish') IS NOT NULL
    AND OBJECT_ID('fk_submission_resubmissions_intent', 'F') IS NOT NULL
    ALTER TABLE submission_resubmissions DROP CONSTRAINT fk_submission_resubmissions_intent;
IF SERVERPROPERTY('Babelfish') IS NOT NULL
    AND OBJECT_ID('fk_submission_resubmissions_as', 'F') IS NOT NULL
    ALTER TABLE submission_resubmissions DROP CONSTRAINT fk_submission_resubmissions_as;

-- +goose Down
IF SERVERPROPERTY('Babelfish') IS NOT NULL
    AND OBJECT_ID('fk_submission_resubmissions_intent', 'F') IS NULL
    ALTER TABLE submission_resubmissions ADD CONSTRAINT fk_submission_resubmissions_intent
        FOREIGN KEY (intent_id) REFERENCES submission_intents (intent_id);
IF SERVERPROPERTY('Babelfish') IS NOT NULL
    AND OBJECT_ID('fk_submission_resubmissions_as', 'F') IS NULL
    ALTER TABLE submission_resubmissions ADD CONSTRAINT fk_submission_resubmissions_as
        FOREIGN KEY (resubmitted_as) REFERENCES submission_intents (intent_id);

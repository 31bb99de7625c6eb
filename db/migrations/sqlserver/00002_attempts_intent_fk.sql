-- The foreign key from an attempt to its intent, on SQL Server only.
--
-- Babelfish for PostgreSQL cannot use a FOREIGN KEY between two columns
-- with an explicit collation: every insert into the referencing table fails
-- with "could not determine which collation to use for string comparison".
-- SERVERPROPERTY('Babelfish') is NULL on SQL Server and set on Babelfish, so
-- the key is created on SQL Server and left out (or dropped, for a database
-- migrated before this file existed) on Babelfish. The store never relies on
-- the key: StartAttempt inserts an attempt only after counting it on its
-- intent in the same transaction.
--
-- Databases migrated before this file got the key from 00001_init.sql; the
-- OBJECT_ID test keeps this migration from adding it twice. This file is
-- T-SQL control flow that sqlc's parser rejects, so sqlc.yaml lists the
-- schema files it reads and leaves this one out (the key changes no type).

-- +goose Up
IF SERVERPROPERTY('Babelfish') IS NULL
    AND OBJECT_ID('fk_submission_attempts_intent', 'F') IS NULL
    ALTER TABLE submission_attempts ADD CONSTRAINT fk_submission_attempts_intent
        FOREIGN KEY (intent_id) REFERENCES submission_intents (intent_id);
IF SERVERPROPERTY('Babelfish') IS NOT NULL
    AND OBJECT_ID('fk_submission_attempts_intent', 'F') IS NOT NULL
    ALTER TABLE submission_attempts DROP CONSTRAINT fk_submission_attempts_intent;

-- +goose Down
IF OBJECT_ID('fk_submission_attempts_intent', 'F') IS NOT NULL
    ALTER TABLE submission_attempts DROP CONSTRAINT fk_submission_attempts_intent;

package sqlite

import (
	"database/sql"
	"errors"
	"fmt"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/submissionmanager/submission-manager/core"
)

// errClosed answers operations submitted after Close.
var errClosed = errors.New("sqlite: store is closed")

// mapError is the one place where driver and database/sql errors become
// core errors. Errors that already are core errors (the store's own verdicts,
// such as core.ErrFenced) pass through unchanged; everything else says
// nothing about the request and becomes core.ErrStoreUnavailable, wrapping
// the cause so logs keep it (a context error stays visible to errors.Is).
func mapError(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case isCoreError(err):
		return err
	default:
		return fmt.Errorf("sqlite: %s: %w: %w", op, core.ErrStoreUnavailable, err)
	}
}

// isCoreError reports whether err is already a core error callers act on,
// which must not be wrapped again behind core.ErrStoreUnavailable.
func isCoreError(err error) bool {
	return isVerdict(err) || errors.Is(err, core.ErrStoreUnavailable)
}

// isVerdict reports whether err is a refusal about the request (a conflict,
// a fence, an intent that moved on or is missing) rather than a failure of
// the database: a write that returns one has left its transaction intact.
func isVerdict(err error) bool {
	var conflict *core.IdempotencyConflictError
	return errors.As(err, &conflict) ||
		errors.Is(err, core.ErrFenced) ||
		errors.Is(err, core.ErrIntentNotRunnable) ||
		errors.Is(err, core.ErrIntentNotFound) ||
		errors.Is(err, core.ErrIntentNotEnded) ||
		errors.Is(err, core.ErrResubmissionIDTaken) ||
		errors.Is(err, core.ErrIntentEnded) ||
		errors.Is(err, core.ErrAttemptInFlight) ||
		errors.Is(err, core.ErrSessionExists)
}

// statementRolledBack reports whether SQLite refused one statement for a
// constraint and undid just that statement, leaving its transaction intact.
func statementRolledBack(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrConstraint
}

// noRows reports whether a single-row query found nothing; callers turn that
// into their own answer (not found, lease missing, duplicate key).
func noRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

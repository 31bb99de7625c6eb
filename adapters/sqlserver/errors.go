package sqlserver

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/submissionmanager/submission-manager/core"
)

// SQL Server error numbers the adapter reacts to.
const (
	errNumPrimaryKeyViolation = 2627 // PRIMARY KEY or UNIQUE constraint
	errNumUniqueIndexDup      = 2601 // unique index
	errNumDeadlockVictim      = 1205
	errNumLockTimeout         = 1222
	errNumConstraintConflict  = 547 // CHECK or FOREIGN KEY constraint
	errNumTruncation          = 2628
	errNumTruncationLegacy    = 8152
	// The adapter's own THROWs in its fenced batches (attempts_batch.go).
	errNumFenced        = 51000
	errNumLeaseLockHeld = 51001
)

// Errors the adapter decides on internally. They wrap the driver's error
// and, where the cause says nothing about the request, core.ErrStoreUnavailable.
var (
	// errDuplicateKey means an insert lost a race on a key: another instance
	// created the row first, so the caller reads the row that won.
	errDuplicateKey = errors.New("sqlserver: duplicate key")
	// errDeadlock means SQL Server chose this transaction as a deadlock
	// victim and rolled it back; the whole transaction may be retried.
	errDeadlock = errors.New("sqlserver: deadlock victim")
	// errConstraint means a CHECK or FOREIGN KEY constraint refused a write:
	// the adapter was handed data the schema forbids.
	errConstraint = errors.New("sqlserver: constraint violated")
	// errTooLong means a value does not fit its column.
	errTooLong = errors.New("sqlserver: value too long for its column")
)

// mapError is the one place where driver and database errors become the
// errors the rest of the adapter and its callers act on. Every query result
// passes through it. Errors that say nothing about the request (connection
// loss, timeouts, cancellation, deadlocks, unexpected server errors) wrap
// core.ErrStoreUnavailable and keep the original error in the chain.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	var serverErr mssql.Error
	if errors.As(err, &serverErr) {
		switch serverErr.Number {
		case errNumPrimaryKeyViolation, errNumUniqueIndexDup:
			return fmt.Errorf("%w: %w", errDuplicateKey, err)
		case errNumDeadlockVictim:
			return fmt.Errorf("%w: %w: %w", core.ErrStoreUnavailable, errDeadlock, err)
		case errNumConstraintConflict:
			return fmt.Errorf("%w: %w", errConstraint, err)
		case errNumTruncation, errNumTruncationLegacy:
			return fmt.Errorf("%w: %w", errTooLong, err)
		case errNumLockTimeout:
			return fmt.Errorf("%w: lock timeout: %w", core.ErrStoreUnavailable, err)
		case errNumFenced:
			return fmt.Errorf("%w: %w", core.ErrFenced, err)
		case errNumLeaseLockHeld:
			return fmt.Errorf("%w: %w", core.ErrStoreUnavailable, err)
		}
		return fmt.Errorf("%w: sql server error %d: %w", core.ErrStoreUnavailable, serverErr.Number, err)
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", core.ErrStoreUnavailable, err)
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: connection lost: %w", core.ErrStoreUnavailable, err)
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return fmt.Errorf("%w: network: %w", core.ErrStoreUnavailable, err)
	}
	var streamErr mssql.StreamError
	if errors.As(err, &streamErr) {
		return fmt.Errorf("%w: protocol: %w", core.ErrStoreUnavailable, err)
	}
	// Anything else the driver or database/sql reports (a closed pool, a
	// failed login, a TLS handshake) is equally no fault of the request.
	return fmt.Errorf("%w: %w", core.ErrStoreUnavailable, err)
}

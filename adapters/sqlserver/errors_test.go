package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/submissionmanager/submission-manager/core"
)

func TestMapError(t *testing.T) {
	dialErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	cases := []struct {
		name        string
		in          error
		is          []error
		isNot       []error
		keepsDriver bool
	}{
		{"primary key violation", mssql.Error{Number: 2627, Message: "Violation of PRIMARY KEY constraint"},
			[]error{errDuplicateKey}, []error{core.ErrStoreUnavailable}, true},
		{"unique index violation", mssql.Error{Number: 2601, Message: "Cannot insert duplicate key row"},
			[]error{errDuplicateKey}, []error{core.ErrStoreUnavailable}, true},
		{"wrapped duplicate", fmt.Errorf("exec: %w", mssql.Error{Number: 2627}),
			[]error{errDuplicateKey}, nil, true},
		{"deadlock victim", mssql.Error{Number: 1205},
			[]error{errDeadlock, core.ErrStoreUnavailable}, []error{errDuplicateKey}, true},
		{"lock timeout", mssql.Error{Number: 1222},
			[]error{core.ErrStoreUnavailable}, []error{errDeadlock}, true},
		{"check constraint", mssql.Error{Number: 547},
			[]error{errConstraint}, []error{core.ErrStoreUnavailable}, true},
		{"truncation", mssql.Error{Number: 2628},
			[]error{errTooLong}, []error{core.ErrStoreUnavailable}, true},
		{"login failed", mssql.Error{Number: 18456},
			[]error{core.ErrStoreUnavailable}, []error{errDuplicateKey}, true},
		{"invalid object (not migrated)", mssql.Error{Number: 208},
			[]error{core.ErrStoreUnavailable}, nil, true},
		{"connection refused", dialErr, []error{core.ErrStoreUnavailable}, nil, false},
		{"bad connection", driver.ErrBadConn, []error{core.ErrStoreUnavailable, driver.ErrBadConn}, nil, false},
		{"connection dropped", io.ErrUnexpectedEOF, []error{core.ErrStoreUnavailable}, nil, false},
		{"protocol", mssql.StreamError{InnerError: errors.New("bad token")}, []error{core.ErrStoreUnavailable}, nil, false},
		{"cancelled", context.Canceled, []error{core.ErrStoreUnavailable, context.Canceled}, nil, false},
		{"deadline", context.DeadlineExceeded, []error{core.ErrStoreUnavailable, context.DeadlineExceeded}, nil, false},
		{"closed pool", sql.ErrConnDone, []error{core.ErrStoreUnavailable}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mapError(c.in)
			for _, want := range c.is {
				if !errors.Is(got, want) {
					t.Errorf("mapError(%v) = %v, not %v", c.in, got, want)
				}
			}
			for _, notWant := range c.isNot {
				if errors.Is(got, notWant) {
					t.Errorf("mapError(%v) = %v, which is %v", c.in, got, notWant)
				}
			}
			// mssql.Error holds a slice, so errors.Is cannot compare it:
			// the server error must stay reachable with errors.As instead.
			var serverErr mssql.Error
			if c.keepsDriver {
				if !errors.As(got, &serverErr) {
					t.Errorf("mapError(%v) = %v: the server error is no longer reachable with errors.As", c.in, got)
				}
			} else if !errors.Is(got, c.in) {
				t.Errorf("mapError(%v) = %v lost the original error", c.in, got)
			}
		})
	}
	if mapError(nil) != nil {
		t.Error("mapError(nil) != nil")
	}
}

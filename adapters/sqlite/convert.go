package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// nanos is the stored form of a time: Unix nanoseconds, exact for any time
// between the years 1678 and 2262. The zero time is 0, which no real
// timestamp uses, so a zero cursor sorts before every row.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// nullNanos stores the zero time as NULL, for columns where "not set" has a
// meaning (next_due_at of a terminal intent, finished_at in flight).
func nullNanos(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixNano(), Valid: true}
}

// fromNanos reads a stored time back in UTC; 0 is the zero time.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func fromNullNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return fromNanos(n.Int64)
}

func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

// intentFromRow rebuilds an intent without its attempts.
func intentFromRow(r sqlitedb.SubmissionIntent) (core.Intent, error) {
	var contract core.Contract
	if err := json.Unmarshal([]byte(r.Contract), &contract); err != nil {
		return core.Intent{}, fmt.Errorf("intent %q: decoding contract snapshot: %w", r.IntentID, err)
	}
	return core.Intent{
		IntentID:              r.IntentID,
		SubmissionTarget:      r.SubmissionTarget,
		Payload:               json.RawMessage(r.Payload),
		CreatedAt:             fromNanos(r.CreatedAt),
		Status:                core.IntentStatus(r.Status),
		Contract:              contract,
		NotBefore:             fromNullNanos(r.NotBefore),
		NextDueAt:             fromNullNanos(r.NextDueAt),
		AttemptCount:          int(r.AttemptCount),
		FinalOutcome:          core.StoredOutcome(r.FinalOutcomeStatus.String, r.FinalOutcomeReason.String, r.FinalMessageID.String),
		ExhaustedReason:       core.ExhaustedReason(r.ExhaustedReason.String),
		LastModifiedAt:        fromNanos(r.LastModifiedAt),
		PossiblyAccepted:      r.PossiblyAccepted != 0,
		AcceptedAfterDeadline: r.AcceptedAfterDeadline != 0,
		AcceptedMessageID:     r.AcceptedMessageID.String,
		TraceParent:           r.TraceParent.String,
	}, nil
}

func attemptFromRow(r sqlitedb.SubmissionAttempt) core.Attempt {
	return core.Attempt{
		Number:     int(r.AttemptNumber),
		StartedAt:  fromNanos(r.StartedAt),
		FinishedAt: fromNullNanos(r.FinishedAt),
		Outcome:    core.StoredOutcome(r.OutcomeStatus.String, r.OutcomeReason.String, r.MessageID.String),
		Error:      r.Error.String,
		HolderID:   r.HolderID,
		Epoch:      r.LeaseEpoch,
		Sent:       r.Sent,
	}
}

func attemptsFromRows(rows []sqlitedb.SubmissionAttempt) []core.Attempt {
	attempts := make([]core.Attempt, len(rows))
	for i, r := range rows {
		attempts[i] = attemptFromRow(r)
	}
	return attempts
}

func scheduleRow(id, status, mode string, nextDue sql.NullInt64, lastModified int64) ports.ScheduleRow {
	return ports.ScheduleRow{
		IntentID:       id,
		Status:         core.IntentStatus(status),
		Mode:           core.Mode(mode),
		NextDueAt:      fromNullNanos(nextDue),
		LastModifiedAt: fromNanos(lastModified),
	}
}

// leaseFromRow converts the row an acquire or renew wrote and returned. Its
// renewed_at is the statement's now, so it is also when the row was read.
func leaseFromRow(r sqlitedb.SubmissionManagerLease) core.Lease {
	return core.Lease{
		LeaseName:  r.LeaseName,
		HolderID:   r.HolderID,
		Epoch:      r.LeaseEpoch,
		AcquiredAt: fromNanos(r.AcquiredAt),
		RenewedAt:  fromNanos(r.RenewedAt),
		ExpiresAt:  fromNanos(r.ExpiresAt),
		ReadAt:     fromNanos(r.RenewedAt),
	}
}

// leaseFromRead converts a read of the lease row with the database's now.
func leaseFromRead(r sqlitedb.ReadLeaseRow) core.Lease {
	return core.Lease{
		LeaseName:  r.LeaseName,
		HolderID:   r.HolderID,
		Epoch:      r.LeaseEpoch,
		AcquiredAt: fromNanos(r.AcquiredAt),
		RenewedAt:  fromNanos(r.RenewedAt),
		ExpiresAt:  fromNanos(r.ExpiresAt),
		ReadAt:     fromNanos(r.ReadAt),
	}
}

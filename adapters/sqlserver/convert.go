package sqlserver

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf16"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// maxDatetime2 is the "before" position of a first listing page, so one
// query shape serves every page: the last microsecond of datetime2's range.
// SQL Server keeps 7 fractional digits and would take 23:59:59.9999999, but
// Babelfish for PostgreSQL keeps 6 and refuses that value as out of range;
// every instant SubmissionManager stores is far below either.
var maxDatetime2 = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)

// dbTime prepares a time parameter. go-mssqldb sends time.Time as
// datetimeoffset, and converting a datetimeoffset to datetime2 keeps its
// local clock reading and drops the offset; passing UTC makes the stored
// datetime2 the UTC instant every other column holds.
func dbTime(t time.Time) time.Time { return t.UTC() }

// nullTime is dbTime for a nullable column: the zero time is NULL.
func nullTime(t time.Time) sql.NullTime {
	if t.IsZero() {
		return sql.NullTime{}
	}
	return sql.NullTime{Time: dbTime(t), Valid: true}
}

// nullString stores an empty string as NULL, the schema's "absent".
func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

// fromNullTime reads a nullable datetime2; NULL is the zero time.
func fromNullTime(t sql.NullTime) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

// nvarcharLen is a string's length as SQL Server counts nvarchar(n):
// UTF-16 code units, so a character outside the BMP counts twice.
func nvarcharLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// intentRow is the column set every intent SELECT returns; the generated
// row types of the listing queries have the same fields and convert to it.
type intentRow = sqlserverdb.GetIntentRow

// intentFromRow rebuilds a core.Intent (without attempts) from its row.
func intentFromRow(r intentRow) (core.Intent, error) {
	var contract core.Contract
	if err := json.Unmarshal([]byte(r.Contract), &contract); err != nil {
		return core.Intent{}, fmt.Errorf("sqlserver: intent %q has an unreadable contract snapshot: %w", r.IntentID, err)
	}
	return core.Intent{
		IntentID:         r.IntentID,
		SubmissionTarget: r.SubmissionTarget,
		Payload:          json.RawMessage(r.Payload),
		CreatedAt:        r.CreatedAt.UTC(),
		Status:           core.IntentStatus(r.Status),
		Contract:         contract,
		NotBefore:        fromNullTime(r.NotBefore),
		NextDueAt:        fromNullTime(r.NextDueAt),
		AttemptCount:     int(r.AttemptCount),
		FinalOutcome:     core.StoredOutcome(r.FinalOutcomeStatus.String, r.FinalOutcomeReason.String, r.FinalMessageID.String),
		ExhaustedReason:  core.ExhaustedReason(r.ExhaustedReason.String),
		LastModifiedAt:   r.LastModifiedAt.UTC(),
		TraceParent:      r.TraceParent.String,
	}, nil
}

// attemptRow is the column set of an attempt as the store reads it back.
type attemptRow = sqlserverdb.ListAttemptsRow

// attemptFromRow rebuilds a core.Attempt from its row.
func attemptFromRow(r attemptRow) core.Attempt {
	return core.Attempt{
		Number:     int(r.AttemptNumber),
		StartedAt:  r.StartedAt.UTC(),
		FinishedAt: fromNullTime(r.FinishedAt),
		Outcome:    core.StoredOutcome(r.OutcomeStatus.String, r.OutcomeReason.String, r.MessageID.String),
		Error:      r.Error.String,
		HolderID:   r.HolderID,
		Epoch:      r.LeaseEpoch,
		Sent:       r.Sent,
	}
}

// withAttempts attaches attempts to an intent, keeping only those its
// attempt count covers: the two are read by separate statements, and an
// attempt started in between must not show up before the intent counts it.
func withAttempts(intent core.Intent, rows []attemptRow) core.Intent {
	for _, r := range rows {
		if int(r.AttemptNumber) > intent.AttemptCount {
			break
		}
		intent.Attempts = append(intent.Attempts, attemptFromRow(r))
	}
	return intent
}

// scheduleRow converts the schedule columns of an intent.
func scheduleRow(intentID, status, mode string, nextDueAt sql.NullTime, lastModifiedAt time.Time) ports.ScheduleRow {
	return ports.ScheduleRow{
		IntentID:       intentID,
		Status:         core.IntentStatus(status),
		Mode:           core.Mode(mode),
		NextDueAt:      fromNullTime(nextDueAt),
		LastModifiedAt: lastModifiedAt.UTC(),
	}
}

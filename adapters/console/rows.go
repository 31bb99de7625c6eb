package console

import (
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// intentRow is one row of the intents list: the intent and the columns
// derived from it, so that the template only prints.
type intentRow struct {
	core.Intent
	// Scheduled marks a pending intent whose first attempt waits for the
	// client's notBefore: NextDueAt is when it will run.
	Scheduled bool
	// Deadline is when a deadline contract stops trying (zero for other
	// policies).
	Deadline time.Time
	// EndedAt is when the intent became terminal: the store stamps its
	// change marker on that write, and a terminal intent is never written
	// again (zero while pending).
	EndedAt time.Time
	// Last is the latest attempt's outcome or error as text, "" without
	// attempts; LastError tells an error from an outcome, InFlight an
	// attempt that has no answer yet.
	Last      string
	LastError bool
	InFlight  bool
}

// rowOf derives the list's columns of one intent.
func rowOf(in core.Intent) intentRow {
	row := intentRow{Intent: in}
	row.Scheduled = in.Status == core.StatusPending && in.AttemptCount == 0 && in.NotBefore.After(in.CreatedAt)
	if d, ok := in.Contract.Deadline(in.DeadlineStart()); ok {
		row.Deadline = d
	}
	if in.Status.Terminal() {
		row.EndedAt = in.LastModifiedAt
	}
	last, ok := in.LastAttempt()
	switch {
	case !ok:
	case !last.Finished():
		row.Last, row.InFlight = "in flight since "+last.StartedAt.UTC().Format(whenLayout), true
	case last.Outcome != nil:
		row.Last = string(last.Outcome.Status)
		if last.Outcome.Reason != "" {
			row.Last += ": " + last.Outcome.Reason
		}
	default:
		row.Last, row.LastError = last.Error, true
	}
	return row
}

func rowsOf(intents []core.Intent) []intentRow {
	rows := make([]intentRow, len(intents))
	for i, in := range intents {
		rows[i] = rowOf(in)
	}
	return rows
}

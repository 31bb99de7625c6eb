package httpapi

import (
	"time"

	"github.com/submissionmanager/submission-manager/adapters/httpapi/internal/apigen"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// listingParams translates the listing's query parameters into the port's
// filters; the service judges them (a range that holds nothing, a prefix
// longer than any intentId).
func listingParams(q apigen.ListIntentsParams) (ports.ListIntentsParams, error) {
	p := ports.ListIntentsParams{Limit: defaultPageSize, Status: core.IntentStatus(deref((*string)(q.Status))),
		SubmissionTarget: deref(q.SubmissionTarget), PossiblyAccepted: deref(q.PossiblyAccepted),
		AcceptedAfterDeadline: deref(q.AcceptedAfterDeadline), IntentIDPrefix: deref(q.IntentIdPrefix), LastResult: deref(q.LastResult)}
	if q.Limit != nil {
		p.Limit = *q.Limit
	}
	var err error
	if p.CreatedFrom, err = instant("createdFrom", q.CreatedFrom); err != nil {
		return p, err
	}
	if p.CreatedBefore, err = instant("createdBefore", q.CreatedBefore); err != nil {
		return p, err
	}
	if q.CreatedBefore != nil && p.CreatedBefore.IsZero() {
		// The port reads the zero time as no bound; a client that sends it
		// sent its date type's unset value, not "before every intent".
		return p, &core.FieldError{Field: "createdBefore", Message: "is 0001-01-01T00:00:00Z, before every intent; leave it out for no bound"}
	}
	if q.Cursor != nil {
		cursor, err := ports.DecodeCursor(*q.Cursor)
		if err != nil {
			return p, err
		}
		p = cursor.Continue(p)
	}
	return p, nil
}

// dateTimeMessage refuses a date-time parameter, whichever layer noticed.
const dateTimeMessage = "must be an RFC 3339 date-time, such as 2026-02-02T09:00:00Z (a + offset encoded as %2B)"

// instant reads an optional RFC 3339 date-time parameter, whose shape the
// request validator has checked against the document's date-time format:
// time.Time's text form judges the calendar (no February 30), and the
// offset's range is checked here, as neither refuses +24:00.
func instant(field string, text *string) (time.Time, error) {
	if text == nil {
		return time.Time{}, nil
	}
	var t time.Time
	if err := t.UnmarshalText([]byte(*text)); err != nil {
		return time.Time{}, &core.FieldError{Field: field, Message: dateTimeMessage}
	}
	if _, offset := t.Zone(); offset <= -24*3600 || offset >= 24*3600 {
		return time.Time{}, &core.FieldError{Field: field, Message: dateTimeMessage}
	}
	return t, nil
}

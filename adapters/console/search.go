package console

import (
	"errors"
	"net/url"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// listFilter is the intents list's search form as the browser sent it.
// Values are kept as typed, so the form shows them again and the links of
// the page (next, previous, bulk) carry them on.
type listFilter struct {
	Status, Target string
	// Prefix is the start of the intentIds searched for.
	Prefix string
	// From and To bound the creation time, as a datetime-local input (or
	// RFC 3339) writes it; a time without an offset is UTC, as every time
	// the console shows.
	From, To string
	// Result is a fragment of the latest attempt's outcome or error.
	Result string
	// PossiblyAccepted narrows the list to intents the gateway may have
	// accepted although their answer was lost.
	PossiblyAccepted bool
	// AcceptedAfterDeadline narrows the list to intents the gateway
	// accepted after their deadline.
	AcceptedAfterDeadline bool
}

// filterOf reads the search form from a query.
func filterOf(q url.Values) listFilter {
	return listFilter{Status: q.Get("status"), Target: q.Get("target"), Prefix: q.Get("prefix"),
		From: q.Get("from"), To: q.Get("to"), Result: q.Get("result"), PossiblyAccepted: q.Get("possiblyAccepted") == "true",
		AcceptedAfterDeadline: q.Get("acceptedAfterDeadline") == "true"}
}

// values is the filter as a query, without its empty fields.
func (f listFilter) values() url.Values {
	v := url.Values{}
	for name, value := range map[string]string{"status": f.Status, "target": f.Target, "prefix": f.Prefix,
		"from": f.From, "to": f.To, "result": f.Result} {
		if value != "" {
			v.Set(name, value)
		}
	}
	if f.PossiblyAccepted {
		v.Set("possiblyAccepted", "true")
	}
	if f.AcceptedAfterDeadline {
		v.Set("acceptedAfterDeadline", "true")
	}
	return v
}

// params is the service's listing of the filter. A time the form cannot
// read is a field error naming the form's field.
func (f listFilter) params(limit int) (ports.ListIntentsParams, error) {
	p := ports.ListIntentsParams{Status: core.IntentStatus(f.Status), SubmissionTarget: f.Target,
		PossiblyAccepted: f.PossiblyAccepted, AcceptedAfterDeadline: f.AcceptedAfterDeadline,
		IntentIDPrefix: f.Prefix, LastResult: f.Result, Limit: limit}
	var err error
	if p.CreatedFrom, err = formTime("from", f.From); err != nil {
		return p, err
	}
	p.CreatedBefore, err = formTime("to", f.To)
	return p, err
}

// formTimeLayouts are what a datetime-local input sends (minutes, seconds
// with step=1, a fraction), a bare date, and RFC 3339.
var formTimeLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02T15:04:05.999999999",
	"2006-01-02", time.RFC3339Nano}

// formTime reads a time of the search form, in UTC unless it names its
// offset.
func formTime(field, text string) (time.Time, error) {
	if text == "" {
		return time.Time{}, nil
	}
	for _, layout := range formTimeLayouts {
		if t, err := time.ParseInLocation(layout, text, time.UTC); err == nil && !t.IsZero() {
			return t, nil
		}
	}
	return time.Time{}, &core.FieldError{Field: field, Message: "is not a time such as 2026-02-02T09:00 (UTC) or 2026-02-02T10:00:00+01:00"}
}

// formFields are the form's labels of the service's field names, so that a
// refusal names what the operator sees.
var formFields = map[string]string{
	"intentIdPrefix": "intentId starts with", "createdFrom": "created from", "createdBefore": "created before",
	"from": "created from", "to": "created before", "lastResult": "last outcome or error",
}

// fieldRefusal words a field error of the listing for the form, or returns false
// for any other error.
func fieldRefusal(err error) (string, bool) {
	var field *core.FieldError
	if !errors.As(err, &field) {
		return "", false
	}
	name := field.Field
	if label, ok := formFields[name]; ok {
		name = label
	}
	return name + ": " + field.Message, true
}

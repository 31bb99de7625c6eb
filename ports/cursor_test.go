package ports_test

import (
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

func TestCursorRoundTrips(t *testing.T) {
	at := time.Date(2026, 2, 2, 12, 0, 0, 123456789, time.UTC)
	for _, p := range []ports.IntentPosition{
		{CreatedAt: at, IntentID: "order-1234"},
		{CreatedAt: at.Truncate(time.Second), IntentID: "a"},
		{CreatedAt: at, IntentID: `<&>"\ é 😀 ` + "\u2028"},
		{CreatedAt: at.In(time.FixedZone("east", 3600)), IntentID: "zoned"},
		{CreatedAt: time.Unix(0, 1).UTC(), IntentID: "epoch"},
	} {
		got, err := ports.DecodeCursor(ports.EncodeCursor(p))
		if err != nil {
			t.Errorf("%+v: its own cursor refused: %v", p, err)
			continue
		}
		if !got.CreatedAt.Equal(p.CreatedAt) || got.IntentID != p.IntentID {
			t.Errorf("%+v came back as %+v", p, *got)
		}
	}
}

// TestCursorRefusesWhatItDidNotIssue: anything that is not a cursor the
// codec wrote is a field error naming the cursor, never a wrong position.
func TestCursorRefusesWhatItDidNotIssue(t *testing.T) {
	enc := func(json string) string { return base64.RawURLEncoding.EncodeToString([]byte(json)) }
	for name, s := range map[string]string{
		"empty":                     "",
		"not base64url":             "!!",
		"padded base64":             base64.URLEncoding.EncodeToString([]byte(`{"c":"2026-02-02T12:00:00Z","i":"ab"}`)),
		"not JSON":                  enc("not a cursor"),
		"no intentId":               enc(`{"c":"2026-02-02T12:00:00Z"}`),
		"empty intentId":            enc(`{"c":"2026-02-02T12:00:00Z","i":""}`),
		"no time":                   enc(`{"i":"a"}`),
		"a time no store can hold":  enc(`{"c":"9999-01-01T00:00:00Z","i":"a"}`),
		"a time before the stores'": enc(`{"c":"1000-01-01T00:00:00Z","i":"a"}`),
		"a lone surrogate":          enc(`{"c":"2026-02-02T12:00:00Z","i":"\ud800"}`),
		"bytes that are not UTF-8":  enc("{\"c\":\"2026-02-02T12:00:00Z\",\"i\":\"a\xff\"}"),
		"an escape we never write":  enc(`{"c":"2026-02-02T12:00:00Z","i":"\u0061"}`),
		"another member":            enc(`{"c":"2026-02-02T12:00:00Z","i":"a","x":1}`),
		"keys in another case":      enc(`{"C":"2026-02-02T12:00:00Z","I":"a"}`),
		"a repeated key":            enc(`{"c":"2026-02-02T12:00:00Z","i":"b","i":"a"}`),
		"spaces":                    enc(`{"c": "2026-02-02T12:00:00Z", "i": "a"}`),
	} {
		got, err := ports.DecodeCursor(s)
		var field *core.FieldError
		if !errors.As(err, &field) || field.Field != "cursor" {
			t.Errorf("%s: DecodeCursor(%q) = %+v, %v; want a field error naming cursor", name, s, got, err)
		}
	}
}

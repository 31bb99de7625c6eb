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
		for _, prev := range []bool{false, true} {
			s := ports.EncodeCursor(p)
			if prev {
				s = ports.EncodePrevCursor(p)
			}
			got, err := ports.DecodeCursor(s)
			if err != nil {
				t.Errorf("%+v (prev %v): its own cursor refused: %v", p, prev, err)
				continue
			}
			if !got.Position.CreatedAt.Equal(p.CreatedAt) || got.Position.IntentID != p.IntentID || got.Prev != prev {
				t.Errorf("%+v (prev %v) came back as %+v", p, prev, got)
			}
		}
	}
}

// TestCursorsIssuedBeforePrevStillReadAsNext pins the wire form of a next
// page's cursor as it was before listings paged both ways, so a client
// that kept one continues where it was.
func TestCursorsIssuedBeforePrevStillReadAsNext(t *testing.T) {
	const old = "eyJjIjoiMjAyNi0wMi0wMlQxMjowMDowMC4xMjM0NTZaIiwiaSI6Im9yZGVyLTEyMzQifQ" // the API document's example
	got, err := ports.DecodeCursor(old)
	if err != nil || got.Prev || got.Position.IntentID != "order-1234" ||
		!got.Position.CreatedAt.Equal(time.Date(2026, 2, 2, 12, 0, 0, 123456000, time.UTC)) {
		t.Fatalf("an old cursor reads as %+v, %v; want the next page after order-1234", got, err)
	}
	if again := ports.EncodeCursor(got.Position); again != old {
		t.Fatalf("the next page's cursor changed its wire form: %s, was %s", again, old)
	}
}

// TestCursorContinuesInItsDirection: a next page's cursor continues toward
// older intents (Before), a previous page's toward newer ones (After), and
// either replaces the other.
func TestCursorContinuesInItsDirection(t *testing.T) {
	pos := ports.IntentPosition{CreatedAt: time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC), IntentID: "x"}
	other := ports.IntentPosition{IntentID: "other"}
	next := ports.IntentCursor{Position: pos}.Continue(ports.ListIntentsParams{Limit: 5, After: &other})
	if next.Before == nil || *next.Before != pos || next.After != nil || next.Limit != 5 {
		t.Errorf("next page continues as %+v", next)
	}
	prev := ports.IntentCursor{Position: pos, Prev: true}.Continue(ports.ListIntentsParams{Limit: 5, Before: &other})
	if prev.After == nil || *prev.After != pos || prev.Before != nil {
		t.Errorf("previous page continues as %+v", prev)
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
		"a spelled-out next page":   enc(`{"c":"2026-02-02T12:00:00Z","i":"a","p":false}`),
		"a direction not boolean":   enc(`{"c":"2026-02-02T12:00:00Z","i":"a","p":1}`),
		"direction before the rest": enc(`{"p":true,"c":"2026-02-02T12:00:00Z","i":"a"}`),
	} {
		got, err := ports.DecodeCursor(s)
		var field *core.FieldError
		if !errors.As(err, &field) || field.Field != "cursor" {
			t.Errorf("%s: DecodeCursor(%q) = %+v, %v; want a field error naming cursor", name, s, got, err)
		}
	}
}

package intake_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// TestListingRefusalsNameTheParameter: every search filter that cannot be
// what a client meant is refused naming the API's parameter, before the
// store is asked anything.
func TestListingRefusalsNameTheParameter(t *testing.T) {
	svc, _, _, _ := newService(t, 0)
	from := time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)
	pos := &ports.IntentPosition{CreatedAt: from, IntentID: "x"}
	for name, c := range map[string]struct {
		p     ports.ListIntentsParams
		field string
	}{
		"prefix longer than any intentId": {ports.ListIntentsParams{IntentIDPrefix: strings.Repeat("é", 256)}, "intentIdPrefix"},
		"prefix not UTF-8":                {ports.ListIntentsParams{IntentIDPrefix: "a\xff"}, "intentIdPrefix"},
		"fragment too long":               {ports.ListIntentsParams{LastResult: strings.Repeat("x", 201)}, "lastResult"},
		"fragment not UTF-8":              {ports.ListIntentsParams{LastResult: "\xfe"}, "lastResult"},
		"empty range":                     {ports.ListIntentsParams{CreatedFrom: from, CreatedBefore: from}, "createdBefore"},
		"reversed range":                  {ports.ListIntentsParams{CreatedFrom: from, CreatedBefore: from.Add(-time.Second)}, "createdBefore"},
		"both directions":                 {ports.ListIntentsParams{Before: pos, After: pos}, "cursor"},
	} {
		c.p.Limit = 10
		_, err := svc.ListIntents(t.Context(), c.p)
		var fe *core.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v, want a field error naming %s", name, err, c.field)
		}
	}
	for name, p := range map[string]ports.ListIntentsParams{
		"longest prefix":   {IntentIDPrefix: strings.Repeat("é", 255)},
		"longest fragment": {LastResult: strings.Repeat("x", 200)},
		"one-ns range":     {CreatedFrom: from, CreatedBefore: from.Add(time.Nanosecond)},
		"open ranges":      {CreatedFrom: from, CreatedBefore: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		p.Limit = 10
		if _, err := svc.ListIntents(t.Context(), p); err != nil {
			t.Errorf("%s: refused: %v", name, err)
		}
	}
}

// TestListingSearchesAndPagesBothWays submits intents through the service
// and finds them by prefix in pages both ways, each with its links.
func TestListingSearchesAndPagesBothWays(t *testing.T) {
	svc, _, _, _ := newService(t, 0)
	for _, id := range []string{"otp-1", "order-1", "otp-2", "otp-3", "OTP-4", "otp-5"} {
		if _, err := svc.SubmitIntent(t.Context(), ports.SubmitIntentParams{IntentID: id, SubmissionTarget: "sms.realtime", Payload: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	p := ports.ListIntentsParams{Limit: 2, IntentIDPrefix: "otp-"}
	ids := func(page ports.IntentPage) string {
		var out []string
		for _, in := range page.Intents {
			out = append(out, in.IntentID)
		}
		return strings.Join(out, " ")
	}
	first, err := svc.ListIntents(t.Context(), p)
	if err != nil || ids(first) != "otp-5 otp-3" || first.Next == nil || first.Prev != nil {
		t.Fatalf("first page %q next %v prev %v, %v", ids(first), first.Next, first.Prev, err)
	}
	second, err := svc.ListIntents(t.Context(), ports.IntentCursor{Position: *first.Next}.Continue(p))
	if err != nil || ids(second) != "otp-2 otp-1" || second.Next != nil || second.Prev == nil {
		t.Fatalf("second page %q next %v prev %v, %v", ids(second), second.Next, second.Prev, err)
	}
	back, err := svc.ListIntents(t.Context(), ports.IntentCursor{Position: *second.Prev, Prev: true}.Continue(p))
	if err != nil || ids(back) != ids(first) || back.Prev != nil {
		t.Fatalf("back to the first page: %q prev %v, %v", ids(back), back.Prev, err)
	}
}

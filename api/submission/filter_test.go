package submission

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestListPageSendsTheSearch: every field of a Filter reaches the query of
// GET /v1/intents, times as RFC 3339 in UTC, and zero fields stay out.
func TestListPageSendsTheSearch(t *testing.T) {
	c, seen := scripted(t, func(w http.ResponseWriter, _ int) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"intents":[]}`))
	})
	from := time.Date(2026, 2, 2, 10, 0, 0, 500, time.FixedZone("CET", 3600))
	f := Filter{Status: StatusRejected, SubmissionTarget: "sms.realtime", IntentIDPrefix: "otp-", LastResult: "timeout",
		CreatedFrom: from, CreatedBefore: from.Add(time.Hour), PageSize: 5}
	if _, _, err := c.ListPage(context.Background(), f, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ListPage(context.Background(), Filter{}, ""); err != nil {
		t.Fatal(err)
	}
	reqs := seen()
	want := url.Values{"status": {"rejected"}, "submissionTarget": {"sms.realtime"}, "intentIdPrefix": {"otp-"}, "lastResult": {"timeout"},
		"createdFrom": {"2026-02-02T09:00:00.0000005Z"}, "createdBefore": {"2026-02-02T10:00:00.0000005Z"}, "limit": {"5"}}
	if got := reqs[0].URL.Query(); got.Encode() != want.Encode() {
		t.Fatalf("query %s, want %s", got.Encode(), want.Encode())
	}
	if q := reqs[1].URL.RawQuery; q != "" {
		t.Fatalf("the zero Filter sent %q", q)
	}
}

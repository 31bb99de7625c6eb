package httpapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// searchService answers every listing with one intent and a page that has
// both neighbours, and records what it was asked.
type searchService struct {
	refusingService
	got chan ports.ListIntentsParams
}

var (
	nextPos = ports.IntentPosition{CreatedAt: time.Date(2026, 2, 2, 11, 0, 0, 0, time.UTC), IntentID: "older"}
	prevPos = ports.IntentPosition{CreatedAt: time.Date(2026, 2, 2, 13, 0, 0, 0, time.UTC), IntentID: "newer"}
)

func (s searchService) ListIntents(_ context.Context, p ports.ListIntentsParams) (ports.IntentPage, error) {
	s.got <- p
	in := core.Intent{IntentID: "i-1", SubmissionTarget: "sms.realtime", Status: core.StatusPending,
		CreatedAt: time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)}
	return ports.IntentPage{Intents: []core.Intent{in}, Next: &nextPos, Prev: &prevPos}, nil
}

func startSearch(t *testing.T) (string, searchService) {
	t.Helper()
	svc := searchService{refusingService{t}, make(chan ports.ListIntentsParams, 1)}
	srv, err := httpapi.New(httpapi.Config{Service: svc, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL, svc
}

// listRaw lists with the query exactly as given.
func listRaw(t *testing.T, base, rawQuery string) *client.ListIntentsResponse {
	t.Helper()
	res, err := http.Get(base + "/v1/intents?" + rawQuery)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := client.ParseListIntentsResponse(res)
	if err != nil {
		t.Fatal(err)
	}
	return parsed
}

// TestSearchParametersReachTheService: every filter of GET /v1/intents
// arrives in the port's terms, times in any offset as the same instant,
// and the page's neighbours leave as cursors that come back as the
// positions and directions they name.
func TestSearchParametersReachTheService(t *testing.T) {
	base, svc := startSearch(t)
	q := url.Values{"intentIdPrefix": {"otp-"}, "createdFrom": {"2026-02-02T10:00:00+01:00"}, "createdBefore": {"2026-02-02T12:30:00.5Z"},
		"lastResult": {"Timeout"}, "status": {"pending"}, "submissionTarget": {"sms.realtime"}, "limit": {"7"}, "possiblyAccepted": {"true"}}
	res := listRaw(t, base, q.Encode())
	if res.JSON200 == nil {
		t.Fatalf("search: %d %s", res.StatusCode(), res.Body)
	}
	p := <-svc.got
	want := ports.ListIntentsParams{Status: core.StatusPending, SubmissionTarget: "sms.realtime", PossiblyAccepted: true,
		IntentIDPrefix: "otp-", LastResult: "Timeout", Limit: 7,
		CreatedFrom: time.Date(2026, 2, 2, 9, 0, 0, 0, time.UTC), CreatedBefore: time.Date(2026, 2, 2, 12, 30, 0, 500_000_000, time.UTC)}
	if !p.CreatedFrom.Equal(want.CreatedFrom) || !p.CreatedBefore.Equal(want.CreatedBefore) || p.Before != nil || p.After != nil {
		t.Fatalf("range and position reached the service as %+v", p)
	}
	p.CreatedFrom, p.CreatedBefore, want.CreatedFrom, want.CreatedBefore = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if p != want {
		t.Fatalf("filters reached the service as %+v, want %+v", p, want)
	}
	page := res.JSON200
	if page.NextCursor == nil || page.PrevCursor == nil {
		t.Fatalf("a page with both neighbours came without both cursors: %s", res.Body)
	}
	for _, c := range []struct {
		cursor string
		before *ports.IntentPosition
		after  *ports.IntentPosition
	}{{*page.NextCursor, &nextPos, nil}, {*page.PrevCursor, nil, &prevPos}} {
		q.Set("cursor", c.cursor)
		if res := listRaw(t, base, q.Encode()); res.JSON200 == nil {
			t.Fatalf("continuing: %d %s", res.StatusCode(), res.Body)
		}
		got := <-svc.got
		if (got.Before == nil) != (c.before == nil) || (got.After == nil) != (c.after == nil) ||
			c.before != nil && *got.Before != *c.before || c.after != nil && *got.After != *c.after {
			t.Fatalf("cursor continued as before=%v after=%v, want before=%v after=%v", got.Before, got.After, c.before, c.after)
		}
		if got.IntentIDPrefix != "otp-" || got.Limit != 7 {
			t.Fatalf("the filters did not travel with the cursor: %+v", got)
		}
	}
}

// TestSearchRefusalsNameTheParameter: a search parameter the API cannot
// read is a 422 naming it, and the service is never asked.
func TestSearchRefusalsNameTheParameter(t *testing.T) {
	base, svc := startSearch(t)
	for raw, field := range map[string]string{
		"intentIdPrefix=": "intentIdPrefix",
		"intentIdPrefix=" + strings.Repeat("x", 256): "intentIdPrefix",
		"lastResult=":                                                       "lastResult",
		"lastResult=" + strings.Repeat("x", 201):                            "lastResult",
		"createdFrom=yesterday":                                             "createdFrom",
		"createdFrom=2026-02-02":                                            "createdFrom",
		"createdFrom=2026-02-02T10:00:00":                                   "createdFrom",
		"createdBefore=2026-02-02T10:00:00+01:00":                           "createdBefore", // + unencoded is a space
		"createdBefore=0001-01-01T00:00:00Z":                                "createdBefore",
		"createdFrom=2026-02-02T10:00:00Z&createdFrom=2026-02-03T10:00:00Z": "createdFrom",
		"createdFrom=2026-02-02T10:00:00%2B24:00":                           "createdFrom",
		"createdFrom=2026-02-02T10:00:00-23:60":                             "createdFrom",
		"createdBefore=2026-02-30T10:00:00Z":                                "createdBefore",
		"createdFrom=2026-02-02T9:00:00Z":                                   "createdFrom",
		"createdBefore=2026-02-02T09:00:00,5Z":                              "createdBefore",
		"cursor=" + url.QueryEscape(ports.EncodeCursor(nextPos)) + "x":      "cursor",
	} {
		t.Run(raw, func(t *testing.T) {
			res := listRaw(t, base, raw)
			p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
			if got := invalidField(t, p); got != field {
				t.Errorf("the problem names %q, want %q (%s)", got, field, res.Body)
			}
		})
	}
	// A date-time refused by the request validator reads as one refused
	// by the handler.
	for _, raw := range []string{"createdFrom=yesterday", "createdFrom=2026-02-02T10:00:00%2B24:00"} {
		res := listRaw(t, base, raw)
		p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
		if (*p.InvalidFields)[0].Message != "must be an RFC 3339 date-time, such as 2026-02-02T09:00:00Z (a + offset encoded as %2B)" {
			t.Errorf("%s: %s", raw, res.Body)
		}
	}
	select {
	case p := <-svc.got:
		t.Fatalf("a refused search reached the service: %+v", p)
	default:
	}
}

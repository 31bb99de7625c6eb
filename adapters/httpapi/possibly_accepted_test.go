package httpapi_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// listingService answers listings with one intent per call, flagged or not
// as the filter asks, and records the filter.
type listingService struct {
	refusingService
	got chan ports.ListIntentsParams
}

func (s listingService) ListIntents(_ context.Context, p ports.ListIntentsParams) (ports.IntentPage, error) {
	s.got <- p
	in := core.Intent{IntentID: "i-1", SubmissionTarget: "sms.realtime", Status: core.StatusPending,
		CreatedAt: time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC), PossiblyAccepted: p.PossiblyAccepted}
	return ports.IntentPage{Intents: []core.Intent{in}}, nil
}

// TestPossiblyAcceptedFilterAndField: possiblyAccepted=true reaches the
// service as the filter, and a flagged intent carries possiblyAccepted:
// true, an unflagged one no such field.
func TestPossiblyAcceptedFilterAndField(t *testing.T) {
	svc := listingService{refusingService{t}, make(chan ports.ListIntentsParams, 1)}
	srv, err := httpapi.New(httpapi.Config{Service: svc, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c, err := client.NewClientWithResponses(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, flagged := range []bool{true, false} {
		res, err := c.ListIntentsWithResponse(t.Context(), &client.ListIntentsParams{PossiblyAccepted: &flagged})
		if err != nil || res.JSON200 == nil {
			t.Fatalf("list: %v %s", err, res.Body)
		}
		if p := <-svc.got; p.PossiblyAccepted != flagged {
			t.Fatalf("possiblyAccepted=%v reached the service as %+v", flagged, p)
		}
		got := res.JSON200.Intents[0].PossiblyAccepted
		if flagged && (got == nil || !*got) {
			t.Fatalf("a flagged intent reads %s", res.Body)
		}
		if !flagged && got != nil {
			t.Fatalf("an unflagged intent carries the field: %s", res.Body)
		}
	}
}

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
)

// attemptsService answers every GetIntent with one intent holding an
// attempt closed unsent, one that was sent, and one still open.
type attemptsService struct{ refusingService }

func (attemptsService) GetIntent(_ context.Context, id string) (core.Intent, error) {
	at := time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)
	return core.Intent{IntentID: id, SubmissionTarget: "sms.realtime", Status: core.StatusPending, CreatedAt: at,
		Attempts: []core.Attempt{
			{Number: 1, StartedAt: at, FinishedAt: at.Add(time.Millisecond), Error: "not submitted: leadership was lost before the gateway call"},
			{Number: 2, StartedAt: at.Add(time.Second), FinishedAt: at.Add(2 * time.Second), Sent: true, Error: "gateway timed out"},
			{Number: 3, StartedAt: at.Add(3 * time.Second)},
		}}, nil
}

// TestAttemptsSayWhetherTheyWereSent: an attempt closed as never sent
// reads sent: false, so clients count tries without matching error texts;
// a sent one and one still in flight (its call may have been made) read
// sent: true.
func TestAttemptsSayWhetherTheyWereSent(t *testing.T) {
	srv, err := httpapi.New(httpapi.Config{Service: attemptsService{refusingService{t}}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c, err := client.NewClientWithResponses(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.GetIntentWithResponse(t.Context(), "i-1", nil)
	if err != nil || res.JSON200 == nil {
		t.Fatalf("get: %v %s", err, res.Body)
	}
	var got []bool
	for _, a := range res.JSON200.Attempts {
		got = append(got, a.Sent)
	}
	if want := []bool{false, true, true}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("sent per attempt %v, want %v: %s", got, want, res.Body)
	}
}

package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// lateService lists one intent accepted after the deadline (or not, as
// the filter asks) and resubmits only with the risk acknowledged, as the
// service does for such an intent; it records what reached it.
type lateService struct {
	listingService
	resubmits chan ports.ResubmitIntentParams
}

var _ ports.OperatorService = lateService{}

func (s lateService) ListIntents(_ context.Context, p ports.ListIntentsParams) (ports.IntentPage, error) {
	s.got <- p
	in := core.Intent{IntentID: "late-1", SubmissionTarget: "sms.realtime", Status: core.StatusExhausted,
		ExhaustedReason: core.ExhaustedDeadlineExceeded, CreatedAt: time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)}
	if p.AcceptedAfterDeadline {
		in.AcceptedAfterDeadline, in.AcceptedMessageID = true, "gw-7f3a9c"
	}
	return ports.IntentPage{Intents: []core.Intent{in}}, nil
}

func (s lateService) ResubmitIntent(_ context.Context, p ports.ResubmitIntentParams) (ports.SubmitIntentResult, error) {
	s.resubmits <- p
	if !p.AcknowledgeDeliveryRisk {
		return ports.SubmitIntentResult{}, fmt.Errorf("%w: the gateway accepted intent %q after its acceptance deadline (message gw-7f3a9c)",
			core.ErrDeliveryRisk, p.IntentID)
	}
	return ports.SubmitIntentResult{Created: true, Intent: core.Intent{IntentID: p.IntentID + "~r1", Status: core.StatusPending,
		SubmissionTarget: "sms.realtime", CreatedAt: time.Date(2026, 2, 2, 13, 0, 0, 0, time.UTC), ResubmittedFrom: p.IntentID}}, nil
}

func (s lateService) CountIntents(context.Context) ([]ports.IntentCount, error) { return nil, nil }

// TestAcceptedAfterDeadlineOverHTTP: acceptedAfterDeadline=true reaches
// the service as the filter and the intent shows the fact and the message
// id; a resubmission without acknowledgeDeliveryRisk answers 409
// delivery-risk naming the risk and the field, and with it reaches the
// service acknowledged.
func TestAcceptedAfterDeadlineOverHTTP(t *testing.T) {
	svc := lateService{listingService{refusingService{t}, make(chan ports.ListIntentsParams, 1)}, make(chan ports.ResubmitIntentParams, 1)}
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
		res, err := c.ListIntentsWithResponse(t.Context(), &client.ListIntentsParams{AcceptedAfterDeadline: &flagged})
		if err != nil || res.JSON200 == nil {
			t.Fatalf("list: %v %s", err, res.Body)
		}
		if p := <-svc.got; p.AcceptedAfterDeadline != flagged || p.PossiblyAccepted {
			t.Fatalf("acceptedAfterDeadline=%v reached the service as %+v", flagged, p)
		}
		in := res.JSON200.Intents[0]
		if flagged && (in.AcceptedAfterDeadline == nil || !*in.AcceptedAfterDeadline || in.AcceptedMessageId == nil ||
			*in.AcceptedMessageId != "gw-7f3a9c" || in.Status != client.IntentStatusExhausted) {
			t.Fatalf("an intent accepted after the deadline reads %s", res.Body)
		}
		if !flagged && (in.AcceptedAfterDeadline != nil || in.AcceptedMessageId != nil) {
			t.Fatalf("an intent without the fact carries its fields: %s", res.Body)
		}
	}

	refused, err := c.ResubmitIntentWithResponse(t.Context(), "late-1", client.ResubmissionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if p := <-svc.resubmits; p.AcknowledgeDeliveryRisk {
		t.Fatalf("{} reached the service as %+v", p)
	}
	if refused.StatusCode() != http.StatusConflict || refused.HTTPResponse.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("unacknowledged: %d %s", refused.StatusCode(), refused.Body)
	}
	var p client.Problem
	if err := json.Unmarshal(refused.Body, &p); err != nil {
		t.Fatal(err)
	}
	if p.Type != httpapi.TypeDeliveryRisk || p.Detail == nil || !strings.Contains(*p.Detail, "after its acceptance deadline") ||
		!strings.Contains(*p.Detail, "twice") || p.InvalidFields == nil || (*p.InvalidFields)[0].Field != "acknowledgeDeliveryRisk" {
		t.Fatalf("unacknowledged: %s", refused.Body)
	}
	ack := true
	created, err := c.ResubmitIntentWithResponse(t.Context(), "late-1", client.ResubmissionRequest{AcknowledgeDeliveryRisk: &ack})
	if err != nil || created.JSON201 == nil || created.JSON201.IntentId != "late-1~r1" {
		t.Fatalf("acknowledged: %v %d %s", err, created.StatusCode(), created.Body)
	}
	if p := <-svc.resubmits; !p.AcknowledgeDeliveryRisk {
		t.Fatalf("acknowledgeDeliveryRisk true reached the service as %+v", p)
	}
}

// CancelIntent and RunNow are no part of these tests.
func (lateService) CancelIntent(context.Context, ports.IntentActionParams) (ports.IntentActionResult, error) {
	return ports.IntentActionResult{}, errors.New("lateService cancels nothing")
}

func (lateService) RunNow(context.Context, ports.IntentActionParams) (ports.IntentActionResult, error) {
	return ports.IntentActionResult{}, errors.New("lateService runs nothing now")
}

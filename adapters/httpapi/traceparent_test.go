package httpapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// tracingService records the traceparent each submission reached it with
// and creates every intent.
type tracingService struct {
	refusingService
	mu   sync.Mutex
	seen []string
}

func (s *tracingService) record(tp string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, tp)
}

func (s *tracingService) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := s.seen
	s.seen = nil
	return seen
}

func (s *tracingService) SubmitIntent(_ context.Context, p ports.SubmitIntentParams) (ports.SubmitIntentResult, error) {
	s.record(p.TraceParent)
	in := core.NewIntent(p.IntentID, testContract, p.Payload, time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	return ports.SubmitIntentResult{Intent: in, Created: true}, nil
}

func (s *tracingService) SubmitIntents(_ context.Context, items []ports.SubmitIntentParams) ([]ports.SubmitIntentsItem, error) {
	out := make([]ports.SubmitIntentsItem, len(items))
	for i, p := range items {
		s.record(p.TraceParent)
		if p.Refused != nil {
			out[i].Err = p.Refused
			continue
		}
		in := core.NewIntent(p.IntentID, testContract, p.Payload, time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
		out[i].Result = ports.SubmitIntentResult{Intent: in, Created: true}
	}
	return out, nil
}

func startTracing(t *testing.T) (*tracingService, string) {
	t.Helper()
	svc := &tracingService{refusingService: refusingService{t}}
	srv, err := httpapi.New(httpapi.Config{Service: svc, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return svc, ts.URL
}

const sentTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// postTraced sends body to path with the given traceparent lines.
func postTraced(t *testing.T, url, body string, traceParents ...string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for _, tp := range traceParents {
		req.Header.Add("traceparent", tp)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestSubmitHandsTheTraceParentToTheService: POST /v1/intents hands the
// traceparent header to the service as sent (the service judges it),
// through the generated client's parameter too; a malformed value is never
// refused, and a request with several is handed none.
func TestSubmitHandsTheTraceParentToTheService(t *testing.T) {
	svc, url := startTracing(t)
	c, err := client.NewClientWithResponses(url)
	if err != nil {
		t.Fatal(err)
	}
	tp := sentTrace
	res, err := c.SubmitIntentWithResponse(t.Context(), &client.SubmitIntentParams{Traceparent: &tp},
		client.SubmitIntentRequest{IntentId: "a", SubmissionTarget: "sms.realtime", Payload: json.RawMessage(`{"to":"1"}`)})
	if err != nil || res.StatusCode() != http.StatusCreated {
		t.Fatalf("submit through the client: %v %v", res.Status(), err)
	}
	if got := svc.take(); len(got) != 1 || got[0] != sentTrace {
		t.Errorf("the service got traceparents %q, want %q", got, sentTrace)
	}
	body := `{"intentId":"b","submissionTarget":"sms.realtime","payload":{}}`
	for _, c := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"none", nil, ""},
		{"malformed", []string{"not-a-traceparent"}, "not-a-traceparent"},
		{"repeated", []string{sentTrace, sentTrace}, ""},
	} {
		if status := postTraced(t, url+"/v1/intents", body, c.lines...); status != http.StatusCreated {
			t.Errorf("%s: status %d, want 201: a trace context never refuses a submission", c.name, status)
		}
		if got := svc.take(); len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: the service got traceparents %q, want %q", c.name, got, c.want)
		}
	}
}

// TestBatchHandsTheTraceParentToEveryItem: the batch's traceparent goes
// with every item, one the API could not read included.
func TestBatchHandsTheTraceParentToEveryItem(t *testing.T) {
	svc, url := startTracing(t)
	body := `{"intents":[{"intentId":"a","submissionTarget":"sms.realtime","payload":{}},"not an item",
		{"intentId":"b","submissionTarget":"sms.realtime","payload":{}}]}`
	if status := postTraced(t, url+"/v1/intents/batch", body, sentTrace); status != http.StatusOK {
		t.Fatalf("batch status %d", status)
	}
	if got := svc.take(); len(got) != 3 || got[0] != sentTrace || got[1] != sentTrace || got[2] != sentTrace {
		t.Errorf("the items reached the service with traceparents %q, want %q on each of 3", got, sentTrace)
	}
	if status := postTraced(t, url+"/v1/intents/batch", body, sentTrace, sentTrace); status != http.StatusOK {
		t.Fatalf("batch with two traceparent lines: status %d", status)
	}
	if got := svc.take(); len(got) != 3 || got[0] != "" || got[2] != "" {
		t.Errorf("with two traceparent lines the items got %q, want none", got)
	}
}

package httpapi_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// cappingService judges batches as the service does: it alone refuses an
// empty batch or one over its cap, and answers an item the API could not
// read with the API's refusal. It keeps what it was sent.
type cappingService struct {
	answeringService
	cap  int
	sent [][]ports.SubmitIntentParams
}

func (s *cappingService) SubmitIntents(ctx context.Context, items []ports.SubmitIntentParams) ([]ports.SubmitIntentsItem, error) {
	s.sent = append(s.sent, items)
	if len(items) == 0 || len(items) > s.cap {
		return nil, &core.FieldError{Field: "intents", Message: fmt.Sprintf("holds %d intents", len(items))}
	}
	out, err := s.answeringService.SubmitIntents(ctx, items)
	for i, p := range items {
		if p.Refused != nil {
			out[i] = ports.SubmitIntentsItem{Err: p.Refused}
		}
	}
	return out, err
}

// TestBatchSizeIsTheServicesToJudge: every item, read or not, reaches the
// service, so that its cap counts what the client sent, and its refusal of
// the batch reaches the client through the problem mapper.
func TestBatchSizeIsTheServicesToJudge(t *testing.T) {
	svc := &cappingService{cap: 3}
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
	item := `{"intentId":"a","submissionTarget":"t","payload":{}}`
	unreadable := `{"intentId":5,"submissionTarget":"t","payload":{}}`
	post := func(items ...string) (int, []byte) {
		t.Helper()
		res, err := c.SubmitIntentBatchWithBodyWithResponse(context.Background(), "application/json",
			strings.NewReader(`{"intents":[`+strings.Join(items, ",")+`]}`))
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() == 200 {
			return 200, res.Body
		}
		p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
		if got := invalidField(t, p); got != "intents" {
			t.Fatalf("batch of %d refused naming %q, want intents", len(items), got)
		}
		return res.StatusCode(), res.Body
	}

	if status, _ := post(); status != 422 || len(svc.sent) != 1 || len(svc.sent[0]) != 0 {
		t.Fatalf("empty batch: %d, service sent %d calls", status, len(svc.sent))
	}
	// Over the cap only when the unreadable items count.
	if status, _ := post(item, unreadable, unreadable, item); status != 422 || len(svc.sent[1]) != 4 {
		t.Fatalf("4 items, 2 unreadable, cap 3: %d, the service saw %d", status, len(svc.sent[1]))
	}
	status, body := post(item, unreadable)
	if status != 200 || len(svc.sent[2]) != 2 {
		t.Fatalf("2 items: %d %s", status, body)
	}
	got := svc.sent[2]
	if got[0].Refused != nil || got[0].IntentID != "a" || got[1].Refused == nil || got[1].IntentID != "" {
		t.Errorf("the service was sent %+v, want the read item and the unread one's refusal", got)
	}
	if !strings.Contains(string(body), `"status":422`) || !strings.Contains(string(body), `"field":"intentId"`) {
		t.Errorf("the unread item is not answered with its refusal naming intentId: %s", body)
	}
}

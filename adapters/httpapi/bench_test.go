package httpapi_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// creatingService answers every submission as created, with no store behind
// it, so that a benchmark measures the HTTP layer alone.
type creatingService struct {
	refusingService
	contract core.Contract
}

func (s creatingService) SubmitIntent(_ context.Context, p ports.SubmitIntentParams) (ports.SubmitIntentResult, error) {
	in := core.NewIntent(p.IntentID, s.contract, p.Payload, time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	return ports.SubmitIntentResult{Intent: in, Created: true}, nil
}

// BenchmarkSubmitIntentHTTP is the API's own cost of one submission: body
// checks, parameter validation, the one-pass decoding of the body, the response,
// without network, service or store. Compare with the service's CPU per
// intent under load (docs/benchmarks.md) to see what the HTTP layer takes.
func BenchmarkSubmitIntentHTTP(b *testing.B) {
	contract := core.Contract{SubmissionTarget: "sms.realtime", GatewayType: core.GatewaySMS,
		GatewayURL: "http://127.0.0.1:9", Mode: core.ModeRealtime, Policy: core.PolicyDeadline,
		MaxAcceptanceSeconds: 30, TerminalOutcomes: []string{"invalid_request", "invalid_recipient"}}
	srv, err := httpapi.New(httpapi.Config{
		Service: creatingService{contract: contract},
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		b.Fatal(err)
	}
	head := []byte(`{"submissionTarget":"sms.realtime","payload":{"to":"+15550100","text":"` +
		string(bytes.Repeat([]byte("x"), 100)) + `"},"intentId":"bench-`)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		body := strconv.AppendInt(append([]byte(nil), head...), int64(i), 10)
		body = append(body, `"}`...)
		req := httptest.NewRequest(http.MethodPost, "/v1/intents", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

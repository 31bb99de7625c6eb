package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// storingService keeps intents in a map: enough of a service to check what
// the HTTP layer hands on (payloads byte for byte) and that an accepted
// intent can be read back through the same API. It applies the same
// intentId rule as the real service.
type storingService struct {
	refusingService
	mu      sync.Mutex
	intents map[string]core.Intent
	// gate, when set, is received from before each submission is stored.
	gate chan struct{}
	// entered, when set, is sent to when a submission arrives.
	entered chan struct{}
}

var testContract = core.Contract{SubmissionTarget: "sms.realtime", GatewayType: core.GatewaySMS,
	GatewayURL: "http://127.0.0.1:9", Mode: core.ModeRealtime, Policy: core.PolicyDeadline,
	MaxAcceptanceSeconds: 30, TerminalOutcomes: []string{"invalid_request"}}

func (s *storingService) SubmitIntent(_ context.Context, p ports.SubmitIntentParams) (ports.SubmitIntentResult, error) {
	if s.entered != nil {
		s.entered <- struct{}{}
	}
	if s.gate != nil {
		<-s.gate
	}
	if err := core.ValidateIntentID(p.IntentID); err != nil {
		return ports.SubmitIntentResult{}, err
	}
	if p.SubmissionTarget != testContract.SubmissionTarget {
		return ports.SubmitIntentResult{}, core.ErrUnknownTarget
	}
	payload, err := core.CompactPayload(p.Payload)
	if err != nil {
		return ports.SubmitIntentResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if in, ok := s.intents[p.IntentID]; ok {
		if err := core.CheckIdempotency(in, core.Submission{SubmissionTarget: p.SubmissionTarget, Payload: payload}); err != nil {
			return ports.SubmitIntentResult{}, err
		}
		return ports.SubmitIntentResult{Intent: in}, nil
	}
	in := core.NewIntent(p.IntentID, testContract, payload, time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	s.intents[p.IntentID] = in
	return ports.SubmitIntentResult{Intent: in, Created: true}, nil
}

func (s *storingService) GetIntent(_ context.Context, id string) (core.Intent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.intents[id]
	if !ok {
		return core.Intent{}, core.ErrIntentNotFound
	}
	return in, nil
}

func (s *storingService) ListIntents(context.Context, ports.ListIntentsParams) (ports.IntentPage, error) {
	return ports.IntentPage{}, nil
}

func (s *storingService) payload(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.intents[id].Payload)
}

// startStoring serves the API over svc on loopback and returns its URL and
// an SDK client.
func startStoring(t testing.TB, cfg httpapi.Config, svc *storingService) (string, *client.ClientWithResponses) {
	t.Helper()
	if svc.intents == nil {
		svc.intents = map[string]core.Intent{}
	}
	cfg.Service = svc
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	srv, err := httpapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c, err := client.NewClientWithResponses(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	return ts.URL, c
}

func submitBody(id, target, payload string) string {
	idJSON, _ := json.Marshal(id)
	targetJSON, _ := json.Marshal(target)
	return `{"intentId":` + string(idJSON) + `,"submissionTarget":` + string(targetJSON) + `,"payload":` + payload + `}`
}

func TestSubmitRefusesLoneSurrogatesInKeys(t *testing.T) {
	c := start(t, httpapi.Config{})
	cases := []struct{ body, field string }{
		{`{"intentId":"a\ud800b","submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":"a\udc00b","submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":"a\uDBFF","submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":"\ud800\ud800","submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":"\udc00\ud800","submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":"a","submissionTarget":"sms\ud800","payload":{}}`, "submissionTarget"},
		{`{"intentId":"/","submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":"a\u202eb","submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":"a\u2028b","submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":"a\u200bb","submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":"a","intentId":"b","submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":"a","submissionTarget":"sms.realtime","payload":{},"payload":1}`, "payload"},
		{`{"intentId":"a","submissionTarget":null,"payload":{}}`, "submissionTarget"},
		{`{"intentId":"a","submissionTarget":"` + strings.Repeat("t", 256) + `","payload":{}}`, "submissionTarget"},
	}
	for _, tc := range cases {
		res := submitRaw(t, c, "application/json", tc.body)
		p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
		if got := invalidField(t, p); got != tc.field {
			t.Errorf("%s: invalid field %q, want %q", tc.body, got, tc.field)
		}
	}
}

// TestSubmitKeepsPairedSurrogatesAndPayloadsAsSent checks that a proper
// surrogate pair is one character like any other, and that payloads,
// which are opaque, pass byte for byte (lone surrogates and huge numbers
// included, at the top level as nested).
func TestSubmitKeepsPairedSurrogatesAndPayloadsAsSent(t *testing.T) {
	svc := &storingService{}
	_, c := startStoring(t, httpapi.Config{}, svc)
	payloads := []string{`1e999999999`, `{"n":1e999999999}`, `-0.0e-999999`, `"a\ud800b"`, `{"s":"\udc00"}`,
		`null`, `true`, `[]`, `"plain"`, `123456789012345678901234567890`, `{"a":{"b":[1,{"c":null}]}}`}
	for i, payload := range payloads {
		id := fmt.Sprintf("p-%d-\U0001F600", i)
		body := strings.Replace(submitBody(id, "sms.realtime", payload), "\U0001F600", `\ud83d\ude00`, 1)
		res := submitRaw(t, c, "application/json", body)
		if res.StatusCode() != http.StatusCreated {
			t.Fatalf("payload %s: status %d %s", payload, res.StatusCode(), res.Body)
		}
		if got := svc.payload(id); got != payload {
			t.Errorf("payload %s was stored as %s", payload, got)
		}
	}
}

func TestSubmitRefusesContentEncodings(t *testing.T) {
	url, _ := startStoring(t, httpapi.Config{}, &storingService{})
	for _, enc := range []string{"gzip", "deflate, identity", "br", "x-custom"} {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/intents", strings.NewReader(submitBody("a", "sms.realtime", "{}")))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Content-Encoding", enc)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		p := problem(t, res.StatusCode, res.Header.Get("Content-Type"), body, 415, "unsupported-media-type")
		if p.Detail == nil || !strings.Contains(*p.Detail, "Content-Encoding") {
			t.Errorf("%s: detail %v does not name Content-Encoding", enc, p.Detail)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/intents", strings.NewReader(submitBody("a", "sms.realtime", "{}")))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", "identity")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("Content-Encoding identity: status %d, want 201", res.StatusCode)
	}
}

// TestBodySlotsRefuseOverTheLimit holds one submission inside the service
// with one slot configured: the next body is refused at once with 503 and
// Retry-After, and is accepted once the slot is free.
func TestBodySlotsRefuseOverTheLimit(t *testing.T) {
	svc := &storingService{gate: make(chan struct{}), entered: make(chan struct{})}
	_, c := startStoring(t, httpapi.Config{MaxBodiesInFlight: 1}, svc)
	first := make(chan int)
	go func() {
		res := submitRaw(t, c, "application/json", submitBody("first", "sms.realtime", "{}"))
		first <- res.StatusCode()
	}()
	<-svc.entered
	res := submitRaw(t, c, "application/json", submitBody("second", "sms.realtime", "{}"))
	problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 503, "server-busy")
	if res.HTTPResponse.Header.Get("Retry-After") == "" {
		t.Error("a busy refusal has no Retry-After")
	}
	svc.gate <- struct{}{}
	if got := <-first; got != http.StatusCreated {
		t.Fatalf("the held submission got %d", got)
	}
	svc.gate, svc.entered = nil, nil
	if res := submitRaw(t, c, "application/json", submitBody("second", "sms.realtime", "{}")); res.StatusCode() != http.StatusCreated {
		t.Fatalf("after the slot freed: %d %s", res.StatusCode(), res.Body)
	}
}

// TestGetOfInvalidUTF8IsNotFound checks the read side of the rule: an
// id that is not UTF-8 cannot exist and is not looked up.
func TestGetOfInvalidUTF8IsNotFound(t *testing.T) {
	url, _ := startStoring(t, httpapi.Config{}, &storingService{})
	res, err := http.Get(url + "/v1/intents/a%FFb")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	problem(t, res.StatusCode, res.Header.Get("Content-Type"), body, 404, "intent-not-found")
	res, err = http.Get(url + "/v1/intents?submissionTarget=a%FF")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	_ = res.Body.Close()
	problem(t, res.StatusCode, res.Header.Get("Content-Type"), body, 422, "invalid-field")
}

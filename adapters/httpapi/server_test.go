package httpapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// These tests cover what the HTTP layer refuses on its own, before any
// service call: a request that reaches the service here is a defect, so the
// service fails the test when called. Accepted requests are exercised
// end to end (e2e/) against the real engine and store.

// refusingService fails the test on any call that gets past what the
// service judges first: the intentId rule, which lives in core and is the
// service's to apply (the HTTP layer only translates its field error).
type refusingService struct{ t *testing.T }

var _ ports.IntentService = refusingService{}

func (s refusingService) SubmitIntent(_ context.Context, p ports.SubmitIntentParams) (ports.SubmitIntentResult, error) {
	if err := core.ValidateIntentID(p.IntentID); err != nil {
		return ports.SubmitIntentResult{}, err
	}
	s.t.Errorf("the service was reached with %+v", p)
	return ports.SubmitIntentResult{}, core.ErrStoreUnavailable
}

func (s refusingService) SubmitIntents(_ context.Context, items []ports.SubmitIntentParams) ([]ports.SubmitIntentsItem, error) {
	s.t.Errorf("the service was reached with a batch of %d", len(items))
	return nil, core.ErrStoreUnavailable
}

func (s refusingService) GetIntent(_ context.Context, id string) (core.Intent, error) {
	s.t.Errorf("the service was reached for intent %q", id)
	return core.Intent{}, core.ErrStoreUnavailable
}

func (s refusingService) ListIntents(_ context.Context, p ports.ListIntentsParams) (ports.IntentPage, error) {
	s.t.Errorf("the service was reached with %+v", p)
	return ports.IntentPage{}, core.ErrStoreUnavailable
}

func (s refusingService) Targets() []core.Contract {
	s.t.Error("the service was reached for the targets")
	return nil
}

func (s refusingService) Target(name string) (core.Contract, error) {
	s.t.Errorf("the service was reached for target %q", name)
	return core.Contract{}, core.ErrUnknownTarget
}

func start(t *testing.T, cfg httpapi.Config) *client.ClientWithResponses {
	t.Helper()
	cfg.Service = refusingService{t}
	cfg.Logger = slog.New(slog.DiscardHandler)
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
	return c
}

// problem decodes a problem document and checks its media type and status.
func problem(t *testing.T, status int, contentType string, body []byte, wantStatus int, wantType string) client.Problem {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status %d, want %d; body %s", status, wantStatus, body)
	}
	if contentType != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json", contentType)
	}
	var p client.Problem
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("problem body %s: %v", body, err)
	}
	if p.Status != wantStatus || p.Type != httpapi.ProblemTypeBase+wantType {
		t.Fatalf("problem %d %s, want %d %s", p.Status, p.Type, wantStatus, wantType)
	}
	return p
}

func invalidField(t *testing.T, p client.Problem) string {
	t.Helper()
	if p.InvalidFields == nil || len(*p.InvalidFields) != 1 {
		t.Fatalf("want one invalid field, got %+v", p.InvalidFields)
	}
	return (*p.InvalidFields)[0].Field
}

func submitRaw(t *testing.T, c *client.ClientWithResponses, contentType, body string) *client.SubmitIntentResponse {
	t.Helper()
	res, err := c.SubmitIntentWithBodyWithResponse(context.Background(), nil, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSubmitRefusesBodiesThatAreNotJSON(t *testing.T) {
	c := start(t, httpapi.Config{})
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "", "application/json; charset=latin1"} {
		res := submitRaw(t, c, ct, `{"intentId":"a","submissionTarget":"sms.realtime","payload":{}}`)
		p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 415, "unsupported-media-type")
		if p.Detail == nil || !strings.Contains(*p.Detail, "application/json") {
			t.Errorf("Content-Type %q: detail %v does not say what to send", ct, p.Detail)
		}
	}
}

func TestSubmitRefusesMalformedBodies(t *testing.T) {
	c := start(t, httpapi.Config{})
	for _, body := range []string{`{`, `not json`, ``, ` `, `[]`, `"a string"`, `{"intentId":"a",}`, `{}}`, `{} {}`,
		// Invalid UTF-8 would decode to U+FFFD and merge distinct intentIds.
		"{\"intentId\":\"u\xff\",\"submissionTarget\":\"sms.realtime\",\"payload\":{}}"} {
		res := submitRaw(t, c, "application/json", body)
		problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 400, "malformed-request")
	}
}

func TestSubmitNamesTheInvalidField(t *testing.T) {
	c := start(t, httpapi.Config{})
	cases := []struct{ body, field string }{
		{`{"intentId":"","submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":"` + strings.Repeat("é", 256) + `","submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":"a\u0007b","submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":"a\u0085b","submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":42,"submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":".","submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":"..","submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"submissionTarget":"sms.realtime","payload":{}}`, "intentId"},
		{`{"intentId":"a","payload":{}}`, "submissionTarget"},
		{`{"intentId":"a","submissionTarget":"","payload":{}}`, "submissionTarget"},
		{`{"intentId":"a","submissionTarget":"sms.realtime"}`, "payload"},
	}
	for _, tc := range cases {
		res := submitRaw(t, c, "application/json", tc.body)
		p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
		if got := invalidField(t, p); got != tc.field {
			t.Errorf("%s: invalid field %q, want %q", tc.body, got, tc.field)
		}
	}
}

func TestSubmitStopsReadingOversizedBodies(t *testing.T) {
	c := start(t, httpapi.Config{MaxPayloadBytes: 1024})
	// Far over the limit: reading stops at the body limit, before the
	// validator or the service see any of it. (A payload just over the limit
	// is the service's to refuse; e2e covers that.)
	huge := `"` + strings.Repeat("x", 1<<20) + `"`
	res := submitRaw(t, c, "application/json", `{"intentId":"a","submissionTarget":"sms.realtime","payload":`+huge+`}`)
	p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 413, "payload-too-large")
	if p.Detail == nil || !strings.Contains(*p.Detail, "18432") {
		t.Errorf("detail %v does not state the body limit (2*1024+16384)", p.Detail)
	}
}

func TestListNamesTheInvalidParameter(t *testing.T) {
	c := start(t, httpapi.Config{})
	for query, field := range map[string]string{
		"limit=0": "limit", "limit=501": "limit", "limit=ten": "limit",
		"status=done": "status", "cursor=": "cursor", "cursor=%21%21": "cursor",
		// A well-formed cursor whose time no store can hold (year 9999).
		"cursor=" + base64.RawURLEncoding.EncodeToString([]byte(`{"c":"9999-01-01T00:00:00Z","i":"a"}`)): "cursor",
	} {
		res, err := c.ListIntentsWithResponse(context.Background(), nil, func(_ context.Context, r *http.Request) error {
			r.URL.RawQuery = query
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(query, "cursor=") && query != "cursor=" {
			// A syntactically valid string that is no cursor of ours passes
			// the validator; the handler refuses it before the service.
			p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
			if got := invalidField(t, p); got != field {
				t.Errorf("%s: invalid field %q, want %q", query, got, field)
			}
			continue
		}
		p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
		if got := invalidField(t, p); got != field {
			t.Errorf("%s: invalid field %q, want %q", query, got, field)
		}
	}
}

func TestAPIKeysGuardOnlyTheAPI(t *testing.T) {
	c := start(t, httpapi.Config{APIKeys: []string{"k1", "k2"}})
	ctx := context.Background()
	for _, auth := range []string{"", "Bearer", "Bearer ", "Bearer k3", "Basic azE6", "Bearer k1k2", "k1"} {
		res, err := c.ListTargetsWithResponse(ctx, func(_ context.Context, r *http.Request) error {
			if auth != "" {
				r.Header.Set("Authorization", auth)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 401, "unauthorized")
		if got := res.HTTPResponse.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
			t.Errorf("Authorization %q: WWW-Authenticate %q, want a Bearer challenge", auth, got)
		}
	}
	// The refusal comes before validation: an invalid request without a key
	// learns nothing about the API.
	res := submitRaw(t, c, "text/plain", "x")
	problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 401, "unauthorized")

	health, err := c.HealthzWithResponse(ctx)
	if err != nil || health.StatusCode() != 200 {
		t.Fatalf("healthz without a key: %v %v", health.StatusCode(), err)
	}
	ready, err := c.ReadyzWithResponse(ctx)
	if err != nil || ready.StatusCode() != 200 {
		t.Fatalf("readyz without a key: %v %v", ready.StatusCode(), err)
	}
}

func TestHealthAndReadiness(t *testing.T) {
	c := start(t, httpapi.Config{HolderID: "sm-02"})
	ctx := context.Background()
	health, err := c.HealthzWithResponse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if health.StatusCode() != 200 || string(health.Body) != "ok" {
		t.Fatalf("healthz: %d %q, want 200 ok", health.StatusCode(), health.Body)
	}
	ready, err := c.ReadyzWithResponse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ready.StatusCode() != 200 || string(ready.Body) != "mode=follower holder_id=sm-02" {
		t.Fatalf("readyz: %d %q, want 200 with the follower line", ready.StatusCode(), ready.Body)
	}
	if ct := ready.HTTPResponse.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("readyz Content-Type %q, want text/plain", ct)
	}
}

func TestUnknownRoutesAndMethodsAreProblems(t *testing.T) {
	c := start(t, httpapi.Config{})
	ctx := context.Background()
	res, err := c.ClientInterface.(*client.Client).Client.Do(mustRequest(t, ctx, http.MethodGet, c, "/v2/intents"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	problem(t, res.StatusCode, res.Header.Get("Content-Type"), body, 404, "route-not-found")

	res, err = c.ClientInterface.(*client.Client).Client.Do(mustRequest(t, ctx, http.MethodDelete, c, "/v1/intents"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	problem(t, res.StatusCode, res.Header.Get("Content-Type"), body, 405, "method-not-allowed")
	if allow := res.Header.Get("Allow"); allow != "GET, POST" {
		t.Errorf("Allow %q, want %q", allow, "GET, POST")
	}
}

func mustRequest(t *testing.T, ctx context.Context, method string, c *client.ClientWithResponses, path string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.ClientInterface.(*client.Client).Server, "/")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

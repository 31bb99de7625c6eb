package prometheus

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// scrape returns the exposition text of m as an HTTP client would see it.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

func TestEventsAppearInExposition(t *testing.T) {
	m := New()
	m.IntentCreated("sms.realtime")
	m.IntentCreated("sms.realtime")
	m.IntentCompleted("sms.realtime", core.StatusRejected, "invalid_recipient")
	m.AttemptFinished(core.GatewaySMS, "error", 30*time.Millisecond)
	m.FirstAttemptLateness(2 * time.Millisecond)
	m.InFlightAttempts(7)
	m.ScheduleSize(1234)
	m.Leadership(true, 42)
	m.FencedWrite()

	text := scrape(t, m)
	for _, want := range []string{
		`submission_manager_intents_created_total{submission_target="sms.realtime"} 2`,
		`submission_manager_intents_completed_total{reason="invalid_recipient",status="rejected",submission_target="sms.realtime"} 1`,
		`submission_manager_attempts_total{gateway_type="sms",result="error"} 1`,
		`submission_manager_attempt_duration_seconds_bucket{gateway_type="sms",le="0.05"} 1`,
		`submission_manager_first_attempt_lateness_seconds_count 1`,
		`submission_manager_attempts_in_flight 7`,
		`submission_manager_schedule_size 1234`,
		`submission_manager_leader 1`,
		`submission_manager_lease_epoch 42`,
		`submission_manager_fenced_writes_total 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}

	m.Leadership(false, 42)
	if text := scrape(t, m); !strings.Contains(text, "submission_manager_leader 0") {
		t.Error("leader gauge did not drop to 0 after losing leadership")
	}
}

func TestMiddlewareLabelsByRoutePatternNotPath(t *testing.T) {
	m := New()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/intents/{intentId}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
	})
	// A middleware in between that clones the request, as auth and
	// validation middlewares do.
	cloning := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(r.Context()))
	})
	srv := httptest.NewServer(m.Middleware(mux, cloning))
	defer srv.Close()
	for _, path := range []string{"/v1/intents/a", "/v1/intents/b", "/nowhere"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// Clients choose the method: a made-up one must not become a label.
	req, _ := http.NewRequest("FOO1", srv.URL+"/v1/intents/a", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	text := scrape(t, m)
	for _, want := range []string{
		`submission_manager_http_requests_total{code="404",method="GET",route="GET /v1/intents/{intentId}"} 2`,
		`submission_manager_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	if strings.Contains(text, `route="/v1/intents/a"`) {
		t.Error("raw path leaked into a label")
	}
	if strings.Contains(text, `method="FOO1"`) || !strings.Contains(text, `method="other"`) {
		t.Error("a client-chosen method became a label value; want it counted as other")
	}
}

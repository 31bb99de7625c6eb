package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// oneIntent is a service holding one intent whose status a test sets.
type oneIntent struct {
	refusingService
	mu sync.Mutex
	in core.Intent
}

func (s *oneIntent) GetIntent(context.Context, string) (core.Intent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.in, nil
}

func (s *oneIntent) SubmitIntent(context.Context, ports.SubmitIntentParams) (ports.SubmitIntentResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ports.SubmitIntentResult{Intent: s.in, Created: true}, nil
}

func (s *oneIntent) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.in.Status = core.StatusAccepted
	s.in.FinalOutcome = &core.Outcome{Status: core.OutcomeAccepted}
	s.in.NextDueAt = time.Time{}
}

// gate is a FinalWaiter whose waits block until the test opens it, then
// read the intent again from the service; it records the waits asked for,
// and admits none when full. (The wait protocol itself is app/watch's and
// tested there.)
type gate struct {
	full    bool
	svc     *oneIntent
	waiting chan time.Duration
	open    chan struct{}
}

func (g *gate) AwaitFinal(ctx context.Context, in core.Intent, d time.Duration) (core.Intent, bool, error) {
	if in.Status.Terminal() {
		return in, true, nil
	}
	if g.full {
		return in, false, nil
	}
	g.waiting <- d
	select {
	case <-g.open:
	case <-ctx.Done():
	}
	cur, err := g.svc.GetIntent(ctx, in.IntentID)
	return cur, true, err
}

func newWaitAPI(t *testing.T, g *gate, maxWait time.Duration) (*oneIntent, string) {
	t.Helper()
	contract := core.Contract{SubmissionTarget: "sms.realtime", GatewayType: core.GatewaySMS, Mode: core.ModeRealtime,
		Policy: core.PolicyOneShot, TerminalOutcomes: []string{}}
	svc := &oneIntent{refusingService: refusingService{t},
		in: core.NewIntent("i-1", contract, []byte(`{}`), time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC))}
	g.svc = svc
	srv, err := httpapi.New(httpapi.Config{Service: svc, Waiter: g, MaxWait: maxWait, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return svc, ts.URL
}

type answer struct {
	status  int
	applied string
	body    map[string]any
}

func request(t *testing.T, method, url, prefer string) answer {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{"intentId":"i-1","submissionTarget":"sms.realtime","payload":{}}`)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if prefer != "" {
		req.Header.Set("Prefer", prefer)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return answer{}
	}
	defer res.Body.Close()
	a := answer{status: res.StatusCode, applied: res.Header.Get("Preference-Applied")}
	if err := json.NewDecoder(res.Body).Decode(&a.body); err != nil {
		t.Error(err)
	}
	return a
}

func TestPreferWaitAnswersWhenTheIntentIsFinalWithTheSameBody(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			g := &gate{waiting: make(chan time.Duration), open: make(chan struct{})}
			svc, url := newWaitAPI(t, g, 0)
			if method == http.MethodGet {
				url += "/v1/intents/i-1"
			} else {
				url += "/v1/intents"
			}
			done := make(chan answer)
			go func() { done <- request(t, method, url, "wait=120") }()
			if d := <-g.waiting; d != httpapi.DefaultMaxWait {
				t.Errorf("waited %v, want the cap %v", d, httpapi.DefaultMaxWait)
			}
			svc.finish()
			close(g.open)
			got := <-done
			if got.applied != "wait=30" || got.body["status"] != "accepted" {
				t.Fatalf("answer %+v, want the accepted intent with Preference-Applied: wait=30", got)
			}
			// The same intent without the header: the same body, no header.
			plain := request(t, method, url, "")
			if plain.applied != "" {
				t.Errorf("Preference-Applied %q without a Prefer header", plain.applied)
			}
			a, _ := json.Marshal(got.body)
			b, _ := json.Marshal(plain.body)
			if string(a) != string(b) {
				t.Errorf("body with wait %s differs from without %s", a, b)
			}
		})
	}
}

func TestPreferWaitIsNotAppliedOverTheWaiterCap(t *testing.T) {
	g := &gate{full: true}
	_, url := newWaitAPI(t, g, 0)
	got := request(t, http.MethodGet, url+"/v1/intents/i-1", "wait=5")
	if got.status != http.StatusOK || got.applied != "" || got.body["status"] != "pending" {
		t.Errorf("over the cap: %+v, want 200 with the pending intent at once and no Preference-Applied", got)
	}
}

func TestPreferWaitOnAFinalIntentAnswersAtOnce(t *testing.T) {
	g := &gate{} // a wait would block forever on the nil channels
	svc, url := newWaitAPI(t, g, 10*time.Second)
	svc.finish()
	got := request(t, http.MethodGet, url+"/v1/intents/i-1", "wait=20")
	if got.applied != "wait=10" || got.body["status"] != "accepted" {
		t.Errorf("final intent: %+v, want it at once with Preference-Applied: wait=10", got)
	}
}

func TestUnusablePreferIsIgnored(t *testing.T) {
	g := &gate{}
	_, url := newWaitAPI(t, g, 0)
	for _, prefer := range []string{"wait=soon", "wait=-3", "return=minimal"} {
		got := request(t, http.MethodGet, url+"/v1/intents/i-1", prefer)
		if got.status != http.StatusOK || got.applied != "" {
			t.Errorf("Prefer: %s -> %+v, want 200 at once without Preference-Applied", prefer, got)
		}
	}
}

func TestPreferOnSeveralHeaderLinesIsOneList(t *testing.T) {
	g := &gate{} // a wait would block forever on the nil channels
	svc, url := newWaitAPI(t, g, 0)
	svc.finish()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/v1/intents/i-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Add("Prefer", "return=minimal")
	req.Header.Add("Prefer", "wait=3")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Preference-Applied") != "wait=3" {
		t.Errorf("two Prefer lines: %d, Preference-Applied %q; want 200 and wait=3", res.StatusCode, res.Header.Get("Preference-Applied"))
	}
}

// TestPreferWaitTakesEveryTooLargeValueAsTheCap: a wait beyond what a
// 32-bit number holds used to be ignored (answered at once) while one just
// below it was capped; every whole number of seconds over the cap is the
// cap.
func TestPreferWaitTakesEveryTooLargeValueAsTheCap(t *testing.T) {
	g := &gate{} // a wait would block forever on the nil channels
	svc, url := newWaitAPI(t, g, 10*time.Second)
	svc.finish()
	for _, prefer := range []string{"wait=11", "wait=4294967295", "wait=4294967296", "wait=9223372037", "wait=184467440737095516160000"} {
		got := request(t, http.MethodGet, url+"/v1/intents/i-1", prefer)
		if got.status != http.StatusOK || got.applied != "wait=10" {
			t.Errorf("Prefer: %s -> %+v, want 200 with Preference-Applied: wait=10", prefer, got)
		}
	}
}

package submission

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// The real service is behind these calls in e2e/gosdk_test.go; the tests
// here script answers the real service cannot be made to give.

const pendingIntent = `{"intentId":"s-1","submissionTarget":"sms.realtime","status":"pending","createdAt":"2026-02-02T12:00:00Z",
"attempts":[],"contract":{"submissionTarget":"sms.realtime","gatewayType":"sms","mode":"realtime","policy":"one_shot","terminalOutcomes":[]}}`

// scripted serves answer for each request and records the requests.
func scripted(t *testing.T, answer func(w http.ResponseWriter, n int)) (*Client, func() []*http.Request) {
	t.Helper()
	var (
		mu   sync.Mutex
		seen []*http.Request
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r)
		n := len(seen)
		mu.Unlock()
		answer(w, n)
	}))
	t.Cleanup(srv.Close)
	c, err := New(srv.URL+"/", WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	return c, func() []*http.Request {
		mu.Lock()
		defer mu.Unlock()
		return append([]*http.Request(nil), seen...)
	}
}

func TestAnAnswerWithoutAProblemDocumentIsABlankProblem(t *testing.T) {
	c, _ := scripted(t, func(w http.ResponseWriter, _ int) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("<html>Bad Gateway</html>"))
	})
	_, err := c.Get(context.Background(), "s-1")
	var p *Problem
	if !errors.As(err, &p) || p.Type != TypeBlank || p.Status != http.StatusBadGateway || p.Detail == nil || *p.Detail != "<html>Bad Gateway</html>" {
		t.Fatalf("err = %#v, want a blank 502 problem with the body as detail", err)
	}
	if p.Error() != "502 Bad Gateway: <html>Bad Gateway</html>" {
		t.Fatalf("Error() = %q", p.Error())
	}
}

func TestWaitFinalAsksAgainAfterAnAnswerTheServiceDidNotWaitFor(t *testing.T) {
	c, seen := scripted(t, func(w http.ResponseWriter, n int) {
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			_, _ = w.Write([]byte(pendingIntent))
			return
		}
		w.Header().Set("Preference-Applied", "wait=4")
		_, _ = w.Write([]byte(`{"intentId":"s-1","submissionTarget":"sms.realtime","status":"accepted","createdAt":"2026-02-02T12:00:00Z",
"attempts":[],"finalOutcome":{"status":"accepted"},"contract":{"submissionTarget":"sms.realtime","gatewayType":"sms","mode":"realtime","policy":"one_shot","terminalOutcomes":[]}}`))
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5500*time.Millisecond)
	defer cancel()
	in, err := c.WaitFinal(ctx, "s-1")
	if err != nil || in.Status != StatusAccepted {
		t.Fatalf("WaitFinal = %s, %v; want accepted", in.Status, err)
	}
	reqs := seen()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := reqs[0].Header.Get("Prefer"); got != "wait=5" {
		t.Errorf("first Prefer %q, want wait=5: the time ctx leaves, rounded down to whole seconds", got)
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer k" {
		t.Errorf("Authorization %q", got)
	}
	if reqs[0].URL.Path != "/v1/intents/s-1" {
		t.Errorf("path %q", reqs[0].URL.Path)
	}
}

// cancellingDoer makes requests through http.DefaultClient, reads each
// answer whole, and only then cancels: the caller gives up right after an
// answer arrived, while WaitFinal decides what to do next.
type cancellingDoer struct{ cancel context.CancelFunc }

func (d cancellingDoer) Do(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	d.cancel()
	return res, err
}

func TestWaitFinalEndsWithItsContextAndTheLastIntentRead(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(pendingIntent)) // not waited for: WaitFinal would pause
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	c, err := New(srv.URL, WithHTTPClient(cancellingDoer{cancel}))
	if err != nil {
		t.Fatal(err)
	}
	in, err := c.WaitFinal(ctx, "s-1")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want one that wraps context.Canceled", err)
	}
	if in.IntentId != "s-1" || in.Status != StatusPending {
		t.Fatalf("intent = %q %q, want the pending intent last read", in.IntentId, in.Status)
	}
}

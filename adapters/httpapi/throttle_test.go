package httpapi_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/ports"
)

// afterFailures refuses a peer once it reported limit unknown keys, and
// records what the API told it.
type afterFailures struct {
	limit    int
	mu       sync.Mutex
	failures map[string]int
	admitted []ports.AuthClient
}

func (f *afterFailures) Admit(c ports.AuthClient) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.admitted = append(f.admitted, c)
	if f.failures[c.Peer] >= f.limit {
		return 1500 * time.Millisecond
	}
	return 0
}

func (f *afterFailures) Failed(c ports.AuthClient) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures[c.Peer]++
	return 0
}

// TestUnknownKeysAreThrottled: the API reports every unknown key (not a
// missing one) with the client's peer and forwarded addresses, and refuses a
// throttled client with 429 and Retry-After before looking at its key,
// even a right one.
func TestUnknownKeysAreThrottled(t *testing.T) {
	throttle := &afterFailures{limit: 3, failures: map[string]int{}}
	srv, err := httpapi.New(httpapi.Config{Service: answeringService{}, APIKeys: []string{"c-key"},
		Throttle: throttle, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	get := func(peer, key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/v1/intents/i-1", nil)
		req.RemoteAddr = peer
		req.Header.Set("X-Forwarded-For", "198.51.100.1")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec
	}
	const guesser, other = "192.0.2.7:1000", "192.0.2.8:1000"
	if rec := get(guesser, ""); rec.Code != http.StatusUnauthorized {
		t.Fatalf("no key: %d", rec.Code)
	}
	for i := range 3 {
		if rec := get(guesser, "guess"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d, want 401", i+1, rec.Code)
		}
	}
	if n := throttle.failures[guesser]; n != 3 {
		t.Fatalf("the throttle heard of %d unknown keys, want 3 (a missing key is no guess)", n)
	}
	rec := get(guesser, "c-key")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "2" ||
		!strings.Contains(rec.Body.String(), httpapi.TypeAuthThrottled) {
		t.Fatalf("right key from a throttled client: %d, Retry-After %q, %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if rec := get(other, "c-key"); rec.Code != http.StatusOK {
		t.Fatalf("another client: %d", rec.Code)
	}
	if c := throttle.admitted[0]; c.Surface != ports.SurfaceAPI || c.Peer != guesser ||
		len(c.ForwardedFor) != 1 || c.ForwardedFor[0] != "198.51.100.1" {
		t.Fatalf("the throttle was asked about %+v", c)
	}
	// Outside /v1 nothing is throttled.
	req := httptest.NewRequest("GET", "/healthz", nil)
	req.RemoteAddr = guesser
	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code == http.StatusTooManyRequests {
		t.Fatal("/healthz was throttled")
	}
}

package console_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/console"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// afterFailures refuses a client once it reported limit unknown keys.
type afterFailures struct {
	limit int
	mu    sync.Mutex
	fails int
	seen  []ports.AuthClient
}

func (f *afterFailures) Admit(c ports.AuthClient) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, c)
	if f.fails >= f.limit {
		return 42 * time.Second
	}
	return 0
}

func (f *afterFailures) Failed(ports.AuthClient) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fails++
	return 0
}

// instance is one console of several sharing a store, as instances behind
// a load balancer share their database.
func instance(t *testing.T, store *memstore.Store, clk *clocktest.Clock, throttle ports.AuthThrottle) *browser {
	t.Helper()
	svc := oneIntent{intent: core.Intent{IntentID: "x", Status: core.StatusPending, Payload: []byte(`{}`)}}
	ui, err := console.New(console.Config{Service: svc, Operator: svc, Clock: clk, OperatorKeys: []string{operatorKey},
		Sessions: store, Throttle: throttle})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(ui)
	t.Cleanup(ts.Close)
	return &browser{t: t, base: ts.URL, c: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// withCookie requests path from b carrying the session cookie value.
func (b *browser) withCookie(method, path, cookie string, form url.Values) (int, http.Header, string) {
	b.t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, _ := http.NewRequest(method, b.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: "sm_console", Value: cookie})
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	var sb strings.Builder
	_, _ = io.Copy(&sb, res.Body)
	return res.StatusCode, res.Header, sb.String()
}

func cookieOf(t *testing.T, h http.Header) string {
	t.Helper()
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == "sm_console" && c.Value != "" {
			return c.Value
		}
	}
	t.Fatal("no session cookie set")
	return ""
}

// signIn signs in on b and returns the operator session's cookie and its
// CSRF token.
func signIn(t *testing.T, b *browser, key string) (code int, cookie, csrf string) {
	t.Helper()
	_, h, page := b.withCookie("GET", "/ui/signin", "", nil)
	anon := cookieOf(t, h)
	code, h, _ = b.withCookie("POST", "/ui/signin", anon, url.Values{"key": {key}, "csrf": {csrfOf(t, page)}})
	if code != http.StatusSeeOther {
		return code, "", ""
	}
	cookie = cookieOf(t, h)
	_, _, page = b.withCookie("GET", "/ui/intents/x", cookie, nil)
	return code, cookie, csrfOf(t, page)
}

// TestSignOutEndsTheSessionOnEveryInstance: a session signed in on one
// instance works on another (one secret, in the store); after signing out
// on the first, the same cookie, replayed on either, is refused.
func TestSignOutEndsTheSessionOnEveryInstance(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC))
	store := memstore.New(clk)
	a, b := instance(t, store, clk, nil), instance(t, store, clk, nil)
	code, cookie, csrf := signIn(t, a, operatorKey)
	if code != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", code)
	}
	if code, _, _ := b.withCookie("GET", "/ui/intents/x", cookie, nil); code != http.StatusOK {
		t.Fatalf("the other instance with the session: %d, want 200", code)
	}
	if code, _, _ := a.withCookie("POST", "/ui/signout", cookie, url.Values{"csrf": {csrf}}); code != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", code)
	}
	for name, inst := range map[string]*browser{"same": a, "other": b} {
		if code, h, _ := inst.withCookie("GET", "/ui/intents/x", cookie, nil); code != http.StatusSeeOther || h.Get("Location") != "/ui/signin" {
			t.Errorf("%s instance, replayed cookie after sign-out: %d to %q, want 303 to the sign-in form", name, code, h.Get("Location"))
		}
	}
}

// TestSignInIsThrottled: each unknown key is reported to the throttle with
// the client's address; a throttled address gets 429 with Retry-After and
// cannot sign in even with the right key.
func TestSignInIsThrottled(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC))
	throttle := &afterFailures{limit: 2}
	b := instance(t, memstore.New(clk), clk, throttle)
	for i := range 2 {
		if code, _, _ := signIn(t, b, "guess"); code != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d, want 401", i+1, code)
		}
	}
	_, h, page := b.withCookie("GET", "/ui/signin", "", nil)
	code, h, page := b.withCookie("POST", "/ui/signin", cookieOf(t, h), url.Values{"key": {operatorKey}, "csrf": {csrfOf(t, page)}})
	if code != http.StatusTooManyRequests || h.Get("Retry-After") != "42" || !strings.Contains(page, "Too many unknown keys") {
		t.Fatalf("right key from a throttled address: %d, Retry-After %q", code, h.Get("Retry-After"))
	}
	if c := throttle.seen[0]; c.Surface != ports.SurfaceConsole || !strings.HasPrefix(c.Peer, "127.0.0.1:") {
		t.Fatalf("the throttle was asked about %+v", c)
	}
	if throttle.fails != 2 {
		t.Fatalf("%d failures reported, want 2", throttle.fails)
	}
}

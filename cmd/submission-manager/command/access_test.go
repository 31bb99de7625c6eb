package command

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// strongKey is 256 random bits in hex, as openssl rand -hex 32 prints them.
const strongKey = "9f2c4e7a1b3d5f60718293a4b5c6d7e8f90112233445566778899aabbccddeeff"

// syncBuffer is a log sink the server writes to from its goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startWithKeys starts an API-only instance on a new SQLite file with the
// given keys and throttle burst (an hour per further failure, so nothing
// drains during the test), logging to the returned buffer.
func startWithKeys(t *testing.T, db string, clientKeys, operatorKeys []string, burst int) (*Server, *syncBuffer) {
	t.Helper()
	cfg := DefaultServeConfig()
	cfg.Registry = filepath.Join("..", "..", "..", "config", "submission_targets.json")
	cfg.Database = "sqlite:" + db
	cfg.Listen = "127.0.0.1:0"
	cfg.APIOnly = true
	cfg.APIKeys, cfg.OperatorKeys = clientKeys, operatorKeys
	cfg.Access.Throttle.Burst, cfg.Access.Throttle.Interval = burst, time.Hour
	logs := &syncBuffer{}
	srv, err := Start(context.Background(), cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return srv, logs
}

// browserClient keeps cookies and does not follow redirects.
func browserClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func call(t *testing.T, c *http.Client, method, u, key string, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res, string(raw)
}

var csrfInPage = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// consoleSignIn signs in with key and returns the sign-in answer's status.
func consoleSignIn(t *testing.T, c *http.Client, base, key string) int {
	t.Helper()
	_, page := call(t, c, "GET", base+"/ui/signin", "", nil)
	m := csrfInPage.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the sign-in page:\n%s", page)
	}
	res, _ := call(t, c, "POST", base+"/ui/signin", "", url.Values{"key": {key}, "csrf": {m[1]}})
	return res.StatusCode
}

// TestUnknownKeysAreThrottledAcrossAPIAndConsole runs the real wiring: one
// throttle per instance, fed by the API and the console's sign-in, with its
// log events and metrics, and the start-up warning for a weak key.
func TestUnknownKeysAreThrottledAcrossAPIAndConsole(t *testing.T) {
	srv, logs := startWithKeys(t, filepath.Join(t.TempDir(), "sm.db"), []string{"client-key"}, []string{strongKey}, 3)
	c := browserClient()
	if code := consoleSignIn(t, c, srv.URL(), "guess-1"); code != http.StatusUnauthorized {
		t.Fatalf("console guess: %d", code)
	}
	for i := range 2 {
		if res, _ := call(t, c, "GET", srv.URL()+"/v1/intents", "guess", nil); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("API guess %d: %d", i+1, res.StatusCode)
		}
	}
	res, body := call(t, c, "GET", srv.URL()+"/v1/intents", "client-key", nil)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "3600" ||
		!strings.Contains(body, "authentication-throttled") {
		t.Fatalf("right key after three guesses: %d, Retry-After %q, %s", res.StatusCode, res.Header.Get("Retry-After"), body)
	}
	if code := consoleSignIn(t, c, srv.URL(), strongKey); code != http.StatusTooManyRequests {
		t.Fatalf("console sign-in from the throttled address: %d, want 429", code)
	}
	_, metrics := call(t, c, "GET", srv.URL()+"/metrics", "", nil)
	for _, want := range []string{
		`submission_manager_auth_failures_total{surface="api"} 2`,
		`submission_manager_auth_failures_total{surface="console"} 1`,
		`submission_manager_auth_throttled_total{surface="api"} 1`,
		`submission_manager_auth_throttled_total{surface="console"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	log := logs.String()
	if !strings.Contains(log, `"msg":"auth_throttled"`) || !strings.Contains(log, `"client":"127.0.0.1"`) {
		t.Errorf("no auth_throttled event naming the client in:\n%s", log)
	}
	if !strings.Contains(log, `"msg":"weak_key","flag":"--api-keys","position":1`) || strings.Contains(log, `"flag":"--operator-keys"`) {
		t.Errorf("want one weak_key warning, for the client key:\n%s", log)
	}
	if strings.Contains(log, "client-key") || strings.Contains(log, strongKey) {
		t.Error("a key appears in the log")
	}
}

// TestConsoleRotateSecretEndsEverySession: the rotate-secret command ends a
// signed-in session of a running instance at once; on a mistyped database
// it fails and creates nothing.
func TestConsoleRotateSecretEndsEverySession(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sm.db")
	srv, _ := startWithKeys(t, db, nil, []string{strongKey}, 10)
	c := browserClient()
	if code := consoleSignIn(t, c, srv.URL(), strongKey); code != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", code)
	}
	if res, _ := call(t, c, "GET", srv.URL()+"/ui/", "", nil); res.StatusCode != http.StatusOK {
		t.Fatalf("overview when signed in: %d", res.StatusCode)
	}
	code, stdout, stderr := run(t, nil, "console", "rotate-secret", "--database", "sqlite:"+db)
	if code != ExitOK || !strings.Contains(stdout, "generation 2") {
		t.Fatalf("rotate-secret: exit %d\n%s%s", code, stdout, stderr)
	}
	if res, _ := call(t, c, "GET", srv.URL()+"/ui/", "", nil); res.StatusCode != http.StatusSeeOther ||
		res.Header.Get("Location") != "/ui/signin" {
		t.Fatalf("overview after rotation: %d to %q, want 303 to the sign-in form", res.StatusCode, res.Header.Get("Location"))
	}
	if code := consoleSignIn(t, c, srv.URL(), strongKey); code != http.StatusSeeOther {
		t.Fatalf("sign-in after rotation: %d", code)
	}

	missing := filepath.Join(t.TempDir(), "typo.db")
	if code, _, stderr := run(t, nil, "console", "rotate-secret", "--database", "sqlite:"+missing); code != ExitError ||
		!strings.Contains(stderr, "no database") {
		t.Fatalf("rotate-secret on a missing file: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatal("rotate-secret created a database")
	}
	if code, _, _ := run(t, nil, "console", "rotate"); code != ExitUsage {
		t.Fatalf("console rotate: exit %d, want usage", code)
	}
}

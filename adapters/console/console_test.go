package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/console"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

const operatorKey = "op-secret-key"

var contract = core.Contract{SubmissionTarget: "sms.realtime", GatewayType: core.GatewaySMS, GatewayURL: "http://127.0.0.1:9",
	Mode: core.ModeRealtime, Policy: core.PolicyOneShot, TerminalOutcomes: []string{}}

// browser is a cookie-keeping client that does not follow redirects, so
// tests see where the console sends it.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newConsole(t *testing.T, operatorKeys []string) (*browser, *desk, *memstore.Store) {
	t.Helper()
	clk := clocktest.New(time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC))
	store := memstore.New(clk)
	svc := &desk{store: store, clock: clk}
	ui, err := console.New(console.Config{Service: svc, Operator: svc, Clock: clk, OperatorKeys: operatorKeys,
		Sessions: store, Activity: console.NewActivity(nil, clk)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(ui)
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: ts.URL, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}, svc, store
}

func (b *browser) do(method, path string, form url.Values) (int, http.Header, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, b.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if strings.Contains(string(raw), operatorKey) || strings.Contains(res.Header.Get("Location"), operatorKey) {
		b.t.Fatalf("%s %s: the operator key appears in the answer", method, path)
	}
	return res.StatusCode, res.Header, string(raw)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, html string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("no CSRF token in the page")
	}
	return m[1]
}

func TestSignInSessionsAndCSRF(t *testing.T) {
	b, svc, store := newConsole(t, []string{operatorKey})
	if code, h, _ := b.do("GET", "/ui/", nil); code != http.StatusSeeOther || h.Get("Location") != "/ui/signin" {
		t.Fatalf("unsigned overview: %d to %q, want 303 to the sign-in form", code, h.Get("Location"))
	}
	_, h, page := b.do("GET", "/ui/signin", nil)
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Fatalf("CSP %q", csp)
	}
	tok := csrfOf(t, page)
	if code, _, _ := b.do("POST", "/ui/signin", url.Values{"key": {operatorKey}}); code != http.StatusForbidden {
		t.Fatalf("sign-in without CSRF token: %d, want 403", code)
	}
	if code, _, _ := b.do("POST", "/ui/signin", url.Values{"key": {"wrong"}, "csrf": {tok}}); code != http.StatusUnauthorized {
		t.Fatalf("sign-in with a wrong key: %d, want 401", code)
	}
	if code, h, _ := b.do("POST", "/ui/signin", url.Values{"key": {operatorKey}, "csrf": {tok}}); code != http.StatusSeeOther || h.Get("Location") != "/ui/" {
		t.Fatalf("sign-in: %d to %q", code, h.Get("Location"))
	}
	code, _, overview := b.do("GET", "/ui/", nil)
	if code != http.StatusOK || strings.Contains(overview, "open-banner") {
		t.Fatalf("overview after sign-in: %d (banner shown: %v)", code, strings.Contains(overview, "open-banner"))
	}
	session := csrfOf(t, overview)
	if session == tok {
		t.Fatal("the CSRF token survived sign-in: the session was not renewed")
	}

	// An ended intent to resubmit.
	svc.create(t, "dead")
	lease, _, _ := store.Acquire(t.Context(), ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "h", Duration: time.Hour})
	_ = store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: lease.Fence(), IntentID: "dead", Number: 1, StartedAt: lease.AcquiredAt})
	_ = store.FinishAttempt(t.Context(), ports.FinishAttemptParams{Fence: lease.Fence(), IntentID: "dead", Number: 1, FinishedAt: lease.AcquiredAt,
		Error: "x", Sent: true, Decision: core.Decision{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedOneShotCompleted}})

	if code, _, _ := b.do("POST", "/ui/resubmit", url.Values{"id": {"dead"}}); code != http.StatusForbidden {
		t.Fatalf("resubmit without CSRF token: %d, want 403", code)
	}
	if code, _, _ := b.do("POST", "/ui/resubmit", url.Values{"id": {"dead"}, "csrf": {tok}}); code != http.StatusForbidden {
		t.Fatalf("resubmit with the pre-sign-in token: %d, want 403", code)
	}
	if _, err := svc.GetIntent(t.Context(), "dead~r1"); err == nil {
		t.Fatal("a refused form resubmitted")
	}
	code, h, _ = b.do("POST", "/ui/resubmit", url.Values{"id": {"dead"}, "csrf": {session}})
	if code != http.StatusSeeOther || h.Get("Location") != "/ui/intents/dead~r1" {
		t.Fatalf("resubmit: %d to %q", code, h.Get("Location"))
	}
	if code, _, page := b.do("GET", "/ui/intents/dead", nil); code != http.StatusOK || !strings.Contains(page, `id="resubmitted-as"`) {
		t.Fatalf("original after resubmission: %d, link shown %v", code, strings.Contains(page, `id="resubmitted-as"`))
	}
	if code, _, _ := b.do("POST", "/ui/signout", url.Values{"csrf": {session}}); code != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", code)
	}
	if code, _, _ := b.do("GET", "/ui/", nil); code != http.StatusSeeOther {
		t.Fatalf("overview after sign-out: %d, want 303", code)
	}
}

func TestOpenConsoleShowsTheBanner(t *testing.T) {
	b, _, _ := newConsole(t, nil)
	code, _, page := b.do("GET", "/ui/", nil)
	if code != http.StatusOK || !strings.Contains(page, `id="open-banner"`) {
		t.Fatalf("open overview: %d, banner %v", code, strings.Contains(page, `id="open-banner"`))
	}
	if !strings.Contains(page, `id="gateways-unavailable"`) {
		t.Fatal("without a gateway reporter the overview does not say gateway state is not available")
	}
	// Forms still need the session's token.
	if code, _, _ := b.do("POST", "/ui/resubmit", url.Values{"id": {"x"}}); code != http.StatusForbidden {
		t.Fatalf("open console, resubmit without token: %d, want 403", code)
	}
}

func TestBulkResubmissionConfirmsWithACount(t *testing.T) {
	b, svc, store := newConsole(t, nil)
	lease, _, _ := store.Acquire(t.Context(), ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "h", Duration: time.Hour})
	for _, id := range []string{"d-1", "d-2", "d-3", "live"} {
		svc.create(t, id)
		if id == "live" {
			continue
		}
		_ = store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: lease.Fence(), IntentID: id, Number: 1, StartedAt: lease.AcquiredAt})
		_ = store.FinishAttempt(t.Context(), ports.FinishAttemptParams{Fence: lease.Fence(), IntentID: id, Number: 1, FinishedAt: lease.AcquiredAt,
			Error: "x", Sent: true, Decision: core.Decision{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedOneShotCompleted}})
	}
	if _, err := svc.ResubmitIntent(t.Context(), ports.ResubmitIntentParams{IntentID: "d-1"}); err != nil {
		t.Fatal(err)
	}
	code, _, page := b.do("GET", "/ui/bulk-resubmit?status=exhausted", nil)
	if code != http.StatusOK || !strings.Contains(page, "2 exhausted intent(s)") || !strings.Contains(page, "Resubmit 2 intents") {
		t.Fatalf("confirmation: %d\n%s", code, page)
	}
	if code, _, _ := b.do("GET", "/ui/bulk-resubmit?status=pending", nil); code != http.StatusBadRequest {
		t.Fatalf("bulk of pending intents: %d, want 400", code)
	}
	tok := csrfOf(t, page)
	tooMany := url.Values{"csrf": {tok}}
	for i := range console.DefaultBulkLimit + 1 {
		tooMany.Add("id", fmt.Sprint("x-", i))
	}
	tooMany.Set("action", "resubmit")
	tooMany.Set("confirm", "yes")
	if code, _, _ := b.do("POST", "/ui/bulk", tooMany); code != http.StatusBadRequest {
		t.Fatalf("bulk beyond the limit: %d, want 400", code)
	}
	code, _, page = b.do("POST", "/ui/bulk", url.Values{"csrf": {tok}, "action": {"resubmit"}, "confirm": {"yes"}, "id": {"d-2", "d-3", "live"}})
	if code != http.StatusOK || !strings.Contains(page, "Resubmitted 2 of 3 intents") || !strings.Contains(page, "still pending") {
		t.Fatalf("bulk: %d\n%s", code, page)
	}
	for _, id := range []string{"d-2~r1", "d-3~r1"} {
		if _, err := svc.GetIntent(t.Context(), id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}

// gatewayNote is a gateway URL with markup in it, as a registry or an
// operator could write one: the console must show it as text.
const gatewayNote = `http://sms.test/<b onmouseover="x()">`

// fakeGateways reports one gateway with an open breaker and records pause
// and resume, as ports.GatewayOperator.
type fakeGateways struct{ paused map[string]bool }

var _ ports.GatewayOperator = (*fakeGateways)(nil)

func (f *fakeGateways) Gateways(context.Context) (ports.GatewayOverview, error) {
	return ports.GatewayOverview{Leader: true, Gateways: []ports.GatewayStatus{{
		GatewayURL: gatewayNote, GatewayType: core.GatewaySMS, Paused: f.paused[gatewayNote],
		Executor: &ports.GatewayExecution{Breaker: core.BreakerOpen, RecentCalls: 10, RecentFailures: 7},
	}}}, nil
}

func (f *fakeGateways) PauseGateway(_ context.Context, t core.GatewayType, url string) (core.GatewayPause, error) {
	f.paused[url] = true
	return core.GatewayPause{GatewayType: t, GatewayURL: url}, nil
}

func (f *fakeGateways) ResumeGateway(_ context.Context, _ core.GatewayType, url string) (bool, error) {
	was := f.paused[url]
	delete(f.paused, url)
	return was, nil
}

func TestGatewaysShownAndControlled(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC))
	store := memstore.New(clk)
	svc := &desk{store: store, clock: clk}
	gw := &fakeGateways{paused: map[string]bool{}}
	ui, err := console.New(console.Config{Service: svc, Operator: svc, Clock: clk, Sessions: store, Gateways: gw})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(ui)
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	b := &browser{t: t, base: ts.URL, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
	_, _, page := b.do("GET", "/ui/", nil)
	if !strings.Contains(page, `id="gateways"`) || !strings.Contains(page, "http://sms.test/") ||
		!strings.Contains(page, "7 of the last 10 calls failed") || !strings.Contains(page, `action="/ui/gateways/pause"`) {
		t.Fatalf("overview without the gateway, its open breaker and its pause control:\n%s", page)
	}
	if code, _, _ := b.do("POST", "/ui/gateways/pause", url.Values{"csrf": {csrfOf(t, page)}, "gateway": {gatewayNote}}); code != http.StatusSeeOther {
		t.Fatalf("pause: %d", code)
	}
	_, _, page = b.do("GET", "/ui/", nil)
	if strings.Contains(page, gatewayNote) || !strings.Contains(page, "&lt;b onmouseover=") || !strings.Contains(page, `action="/ui/gateways/resume"`) {
		t.Fatalf("paused gateway shown wrongly:\n%s", page)
	}
	if code, _, _ := b.do("POST", "/ui/gateways/resume", url.Values{"gateway": {gatewayNote}}); code != http.StatusForbidden {
		t.Fatalf("resume without CSRF token: %d", code)
	}
}

// TestPossiblyAcceptedIsShownAndNeverResubmittedInBulk pins what the console
// does with an intent the gateway may have accepted although its answer was
// lost: the intent page and the list say so, the list filters on it, and a
// bulk resubmission leaves it out (and says how many it left out), because
// resubmitting it could deliver the message twice.
func TestPossiblyAcceptedIsShownAndNeverResubmittedInBulk(t *testing.T) {
	b, svc, store := newConsole(t, nil)
	lease, _, _ := store.Acquire(t.Context(), ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "h", Duration: time.Hour})
	for _, id := range []string{"plain", "doubtful"} {
		svc.create(t, id)
		if err := store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: lease.Fence(), IntentID: id, Number: 1, StartedAt: lease.AcquiredAt}); err != nil {
			t.Fatal(err)
		}
		dup := &core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonDuplicateReference}
		if err := store.FinishAttempt(t.Context(), ports.FinishAttemptParams{Fence: lease.Fence(), IntentID: id, Number: 1, FinishedAt: lease.AcquiredAt,
			Outcome: dup, Sent: true, Decision: core.Decision{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedOneShotCompleted,
				PossiblyAccepted: id == "doubtful"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, page := b.do("GET", "/ui/intents/doubtful", nil); !strings.Contains(page, `id="possibly-accepted"`) {
		t.Fatalf("the intent page does not show the flag:\n%s", page)
	}
	if _, _, page := b.do("GET", "/ui/intents/plain", nil); strings.Contains(page, `id="possibly-accepted"`) {
		t.Fatal("the intent page flags an intent that is not possibly accepted")
	}
	_, _, page := b.do("GET", "/ui/intents?possiblyAccepted=true", nil)
	if !strings.Contains(page, ">doubtful<") || strings.Contains(page, ">plain<") || strings.Contains(page, `id="bulk"`) {
		t.Fatalf("filtered list: want only doubtful and no bulk link\n%s", page)
	}
	_, _, page = b.do("GET", "/ui/bulk-resubmit?status=exhausted", nil)
	if !strings.Contains(page, "1 exhausted intent(s)") || !strings.Contains(page, `id="bulk-doubtful"`) ||
		!strings.Contains(page, `name="id" value="plain"`) || strings.Contains(page, `value="doubtful"`) {
		t.Fatalf("bulk confirmation must offer plain only and say one was left out:\n%s", page)
	}
}

package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// signedIn is a console with an operator signed in through b's cookie jar,
// and the session's CSRF token.
func signedIn(t *testing.T) (*browser, *desk, string) {
	t.Helper()
	b, svc, _ := newConsole(t, []string{operatorKey})
	_, _, form := b.do("GET", "/ui/signin", nil)
	if code, _, _ := b.do("POST", "/ui/signin", url.Values{"key": {operatorKey}, "csrf": {csrfOf(t, form)}}); code != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", code)
	}
	_, _, page := b.do("GET", "/ui/", nil)
	return b, svc, csrfOf(t, page)
}

var eventRow = regexp.MustCompile(`(?s)<tr class="event">\s*<td class="num">(\d+)</td>\s*<td>[^<]+</td>\s*<td class="event-action">([a-z_]+)</td>\s*<td>([a-z]+)</td>\s*<td>([a-z]+)</td>\s*<td>([0-9a-f]{12})</td>`)

// TestCancelFromTheIntentPage: a pending intent's page offers both actions
// behind a confirmation; a cancel without the session's CSRF token is
// refused and changes nothing; with it, the console answers with the
// intent, now exhausted (cancelled), its history naming the console, the
// operator and the session's tag; a second cancel is a success that
// records nothing new, and the ended intent's page offers no action.
func TestCancelFromTheIntentPage(t *testing.T) {
	b, svc, csrf := signedIn(t)
	svc.create(t, "p-1")
	_, _, page := b.do("GET", "/ui/intents/p-1", nil)
	for _, want := range []string{`id="cancel-form"`, `action="/ui/cancel"`, `id="run-now-form"`, `data-confirm="Cancel this intent?`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the pending intent's page lacks %s", want)
		}
	}
	if code, _, _ := b.do("POST", "/ui/cancel", url.Values{"id": {"p-1"}}); code != http.StatusForbidden {
		t.Fatalf("cancel without the CSRF token: %d, want 403", code)
	}
	if in, _ := svc.GetIntent(t.Context(), "p-1"); in.Status != core.StatusPending || len(in.Events) != 0 {
		t.Fatalf("a refused cancel changed the intent: %s, events %+v", in.Status, in.Events)
	}
	for range 2 {
		code, h, _ := b.do("POST", "/ui/cancel", url.Values{"id": {"p-1"}, "csrf": {csrf}})
		if code != http.StatusSeeOther || h.Get("Location") != "/ui/intents/p-1" {
			t.Fatalf("cancel: %d to %q, want 303 to the intent", code, h.Get("Location"))
		}
	}
	_, _, page = b.do("GET", "/ui/intents/p-1", nil)
	if !strings.Contains(page, `class="status status-exhausted"`) || !strings.Contains(page, "<dd>cancelled</dd>") {
		t.Fatalf("the cancelled intent's page does not show it exhausted, cancelled")
	}
	rows := eventRow.FindAllStringSubmatch(page, -1)
	if len(rows) != 1 || rows[0][1] != "1" || rows[0][2] != "cancel" || rows[0][3] != "console" || rows[0][4] != "operator" {
		t.Fatalf("operator actions shown: %q, want one cancel by the console's operator", rows)
	}
	in, _ := svc.GetIntent(t.Context(), "p-1")
	if len(in.Events) != 1 || in.Events[0].Actor.Session != rows[0][5] {
		t.Fatalf("stored events %+v, page shows session %s", in.Events, rows[0][5])
	}
	if strings.Contains(page, `id="cancel-form"`) || strings.Contains(page, `id="run-now-form"`) {
		t.Error("the ended intent's page still offers an action")
	}
}

// TestRunNowAndRefusalsFromTheConsole: run now makes a scheduled intent
// due and records it; a cancel while an attempt is in flight, and a run now
// of an ended intent, are answered 409 with the reason, and change nothing.
func TestRunNowAndRefusalsFromTheConsole(t *testing.T) {
	b, svc, csrf := signedIn(t)
	later := core.NewIntent("later", contract, []byte(`{}`), svc.clock.Now()).WithNotBefore(svc.clock.Now().Add(time.Hour))
	if _, err := svc.store.CreateIntent(t.Context(), later); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := b.do("POST", "/ui/run-now", url.Values{"id": {"later"}, "csrf": {csrf}}); code != http.StatusSeeOther {
		t.Fatalf("run now: %d, want 303", code)
	}
	in, _ := svc.GetIntent(t.Context(), "later")
	if !in.NextDueAt.Equal(svc.clock.Now()) || len(in.Events) != 1 || in.Events[0].Action != core.ActionRunNow {
		t.Fatalf("after run now: due %v, events %+v", in.NextDueAt, in.Events)
	}
	_, _, page := b.do("GET", "/ui/intents/later", nil)
	if rows := eventRow.FindAllStringSubmatch(page, -1); len(rows) != 1 || rows[0][2] != "run_now" {
		t.Fatalf("operator actions shown: %q, want one run_now", rows)
	}

	svc.create(t, "busy")
	lease, _, err := svc.store.Acquire(t.Context(), ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "sm-1", Duration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: lease.Fence(), IntentID: "busy", Number: 1, StartedAt: svc.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	_, _, page = b.do("GET", "/ui/intents/busy", nil)
	if !strings.Contains(page, `id="in-flight-help"`) {
		t.Error("the page of an intent with an attempt in flight does not say a cancel waits for it")
	}
	code, _, page := b.do("POST", "/ui/cancel", url.Values{"id": {"busy"}, "csrf": {csrf}})
	if code != http.StatusConflict || !strings.Contains(page, "an attempt is in flight") {
		t.Fatalf("cancel in flight: %d, want 409 saying an attempt is in flight", code)
	}
	if in, _ := svc.GetIntent(t.Context(), "busy"); in.Status != core.StatusPending || len(in.Events) != 0 {
		t.Fatalf("a refused cancel changed the intent: %s, events %+v", in.Status, in.Events)
	}
	code, _, _ = b.do("POST", "/ui/cancel", url.Values{"id": {"later"}, "csrf": {csrf}})
	if code != http.StatusSeeOther {
		t.Fatalf("cancel: %d", code)
	}
	code, _, page = b.do("POST", "/ui/run-now", url.Values{"id": {"later"}, "csrf": {csrf}})
	if code != http.StatusConflict || !strings.Contains(page, "it has ended") {
		t.Fatalf("run now of an ended intent: %d, want 409 saying it has ended", code)
	}
	if code, _, _ := b.do("POST", "/ui/cancel", url.Values{"id": {"ghost"}, "csrf": {csrf}}); code != http.StatusNotFound {
		t.Fatalf("cancel of a missing intent: %d, want 404", code)
	}
}

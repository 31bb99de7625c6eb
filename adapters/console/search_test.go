package console_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

var rowID = regexp.MustCompile(`<tr data-intent-id="([^"]*)"`)

// listed returns the intentIds of a list page's rows, in order.
func listed(page string) []string {
	var ids []string
	for _, m := range rowID.FindAllStringSubmatch(page, -1) {
		ids = append(ids, html.UnescapeString(m[1]))
	}
	return ids
}

// rowOf returns the row of one intent in a list page.
func rowHTML(t *testing.T, page, id string) string {
	t.Helper()
	start := strings.Index(page, `<tr data-intent-id="`+id+`"`)
	if start < 0 {
		t.Fatalf("no row of %s in the page", id)
	}
	end := strings.Index(page[start:], "</tr>")
	return page[start : start+end]
}

// searchConsole stores, one second apart from 12:00:00 UTC: otp-1 (its
// attempt timed out, retrying), order-1, otp-2 (rejected
// invalid_recipient), OTP-3 (pending) and otp-4 (accepted).
func searchConsole(t *testing.T) (*browser, *desk, *memstore.Store) {
	b, svc, store := newConsole(t, nil)
	clk := svc.clock.(*clocktest.Clock)
	for _, id := range []string{"otp-1", "order-1", "otp-2", "OTP-3", "otp-4"} {
		svc.create(t, id)
		clk.Advance(time.Second)
	}
	lease, _, _ := store.Acquire(t.Context(), ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "h", Duration: time.Hour})
	finish := func(id string, p ports.FinishAttemptParams) {
		t.Helper()
		if err := store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: lease.Fence(), IntentID: id, Number: 1, StartedAt: clk.Now()}); err != nil {
			t.Fatal(err)
		}
		p.Fence, p.IntentID, p.Number, p.FinishedAt, p.Sent = lease.Fence(), id, 1, clk.Now(), true
		if err := store.FinishAttempt(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	finish("otp-1", ports.FinishAttemptParams{Error: "gateway Timeout", Decision: core.Decision{Status: core.StatusPending, NextDueAt: clk.Now().Add(time.Minute)}})
	rejected := &core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonInvalidRecipient}
	finish("otp-2", ports.FinishAttemptParams{Outcome: rejected, Decision: core.Decision{Status: core.StatusRejected, FinalOutcome: rejected}})
	accepted := &core.Outcome{Status: core.OutcomeAccepted}
	finish("otp-4", ports.FinishAttemptParams{Outcome: accepted, Decision: core.Decision{Status: core.StatusAccepted, FinalOutcome: accepted}})
	return b, svc, store
}

// TestSearchFormFinds drives every field of the search form and the
// intentId box, and sees the filters kept in the form and in the links.
func TestSearchFormFinds(t *testing.T) {
	b, _, _ := searchConsole(t)
	for query, want := range map[string][]string{
		"prefix=otp-": {"otp-4", "otp-2", "otp-1"},
		"prefix=OTP":  {"OTP-3"},
		"from=2026-02-02T12:00:01&to=2026-02-02T12:00:03": {"otp-2", "order-1"},
		"from=2026-02-02T13:00:03%2B01:00":                {"otp-4", "OTP-3"},
		"to=2026-02-02":                                   nil,
		"result=timeout":                                  {"otp-1"},
		"result=INVALID_recipient&status=rejected":        {"otp-2"},
		"result=accepted&prefix=otp":                      {"otp-4"},
		"status=pending&prefix=o":                         {"order-1", "otp-1"},
	} {
		code, _, page := b.do("GET", "/ui/intents?"+query, nil)
		if got := listed(page); code != http.StatusOK || !slices.Equal(got, want) {
			t.Errorf("%s: %d %v, want %v", query, code, got, want)
		}
	}
	_, _, page := b.do("GET", "/ui/intents?prefix=otp-&result=timeout&from=2026-02-02T12:00", nil)
	for _, kept := range []string{`id="prefix" value="otp-"`, `id="result" value="timeout"`, `id="from" step="1" value="2026-02-02T12:00"`} {
		if !strings.Contains(page, kept) {
			t.Errorf("the form does not keep %s", kept)
		}
	}

	// The intentId box goes to an exact intentId, and otherwise lists the
	// intentIds that start with what was typed.
	if code, h, _ := b.do("GET", "/ui/intents?q=otp-2", nil); code != http.StatusSeeOther || h.Get("Location") != "/ui/intents/otp-2" {
		t.Fatalf("q=otp-2: %d to %q, want the intent", code, h.Get("Location"))
	}
	code, _, page := b.do("GET", "/ui/intents?q=otp", nil)
	if got := listed(page); code != http.StatusOK || !slices.Equal(got, []string{"otp-4", "otp-2", "otp-1"}) ||
		!strings.Contains(page, "these are the intents whose intentId starts with it") {
		t.Fatalf("q=otp: %d %v", code, got)
	}

	// The form's own reading of times; the service's refusals are the
	// browser test's, against the real service.
	for query, field := range map[string]string{
		"from=yesterday":      "created from: ",
		"to=2026-02-30T10:00": "created before: ",
	} {
		code, _, page := b.do("GET", "/ui/intents?"+query, nil)
		if code != http.StatusBadRequest || !strings.Contains(page, field) {
			t.Errorf("%s: %d, want 400 naming %q", query, code, field)
		}
	}
}

// TestListColumns: next due (and when a scheduled intent will run), the
// deadline, when an intent ended, its attempts and its latest outcome or
// error.
func TestListColumns(t *testing.T) {
	b, svc, store := searchConsole(t)
	clk := svc.clock.(*clocktest.Clock)
	deadline := contract
	deadline.Policy, deadline.MaxAcceptanceSeconds = core.PolicyDeadline, 60
	later := time.Date(2026, 2, 2, 14, 0, 0, 0, time.UTC)
	in := core.NewIntent("scheduled", deadline, []byte(`{}`), clk.Now()).WithNotBefore(later)
	if _, err := store.CreateIntent(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	_, _, page := b.do("GET", "/ui/intents", nil)
	row := rowHTML(t, page, "scheduled")
	for _, want := range []string{`<span class="tag"`, "scheduled</span> 2026-02-02 14:00:00.000Z", `class="deadline">2026-02-02 14:01:00.000Z`, `class="ended">—`} {
		if !strings.Contains(row, want) {
			t.Errorf("scheduled row lacks %q:\n%s", want, row)
		}
	}
	row = rowHTML(t, page, "otp-1")
	if !strings.Contains(row, `<span class="error-text">gateway Timeout</span>`) || !strings.Contains(row, `class="num attempts">1<`) ||
		!strings.Contains(row, `class="next-due">2026-02-02 12:01:05.000Z`) || strings.Contains(row, "scheduled") {
		t.Errorf("retrying row:\n%s", row)
	}
	row = rowHTML(t, page, "otp-2")
	if !strings.Contains(row, `class="last-result">rejected: invalid_recipient`) || !strings.Contains(row, `class="ended">2026-02-02 12:00:05.000Z`) ||
		!strings.Contains(row, `class="next-due">—`) {
		t.Errorf("rejected row:\n%s", row)
	}
	if row = rowHTML(t, page, "OTP-3"); !strings.Contains(row, `class="last-result">—`) || !strings.Contains(row, `class="num attempts">0<`) {
		t.Errorf("row without attempts:\n%s", row)
	}
}

// TestPagingBothWays follows the next and previous links of the list with
// a filter, and comes back to the same pages.
func TestPagingBothWays(t *testing.T) {
	b, svc, _ := newConsole(t, nil)
	clk := svc.clock.(*clocktest.Clock)
	for i := range 60 {
		svc.create(t, "p-"+string(rune('A'+i/26))+string(rune('a'+i%26)))
		clk.Advance(time.Millisecond)
	}
	link := func(page, id string) string {
		m := regexp.MustCompile(`href="([^"]*)" id="` + id + `"`).FindStringSubmatch(page)
		if m == nil {
			return ""
		}
		return html.UnescapeString(m[1])
	}
	_, _, first := b.do("GET", "/ui/intents?prefix=p-", nil)
	if link(first, "prev") != "" || link(first, "next") == "" {
		t.Fatal("the first page has a previous link or no next one")
	}
	_, _, second := b.do("GET", link(first, "next"), nil)
	_, _, third := b.do("GET", link(second, "next"), nil)
	if n := len(listed(third)); n != 10 || link(third, "next") != "" || !strings.Contains(link(third, "prev"), "prefix=p-") {
		t.Fatalf("third page: %d rows, next %q prev %q", n, link(third, "next"), link(third, "prev"))
	}
	_, _, back := b.do("GET", link(third, "prev"), nil)
	if !slices.Equal(listed(back), listed(second)) {
		t.Fatalf("back from the third page: %v, want the second %v", listed(back), listed(second))
	}
	_, _, top := b.do("GET", link(back, "prev"), nil)
	if !slices.Equal(listed(top), listed(first)) || link(top, "prev") != "" {
		t.Fatalf("back to the top: %v, want the first page without a previous link", listed(top))
	}
}

// TestBulkActionOnASelection: a selection is confirmed with the count of
// the intents the action takes and why the others are left out, then
// acted on, each answered on its own.
func TestBulkActionOnASelection(t *testing.T) {
	b, svc, _ := searchConsole(t)
	_, _, page := b.do("GET", "/ui/intents", nil)
	tok := csrfOf(t, page)
	if !strings.Contains(page, `<option value="resubmit">Resubmit</option>`) || !strings.Contains(page, `form="bulk-select"`) {
		t.Fatal("the list offers no selection and no resubmit action")
	}
	selection := url.Values{"csrf": {tok}, "action": {"resubmit"}, "id": {"otp-2", "otp-4", "otp-1", "gone"}}
	if code, _, _ := b.do("POST", "/ui/bulk", url.Values{"action": {"resubmit"}, "id": {"otp-2"}}); code != http.StatusForbidden {
		t.Fatalf("a selection without the CSRF token: %d, want 403", code)
	}
	code, _, confirm := b.do("POST", "/ui/bulk", selection)
	if code != http.StatusOK || !strings.Contains(confirm, "2 of the 4 selected intents: Resubmit 2 intent(s)?") ||
		!strings.Contains(confirm, `name="id" value="otp-2"`) || !strings.Contains(confirm, `name="id" value="otp-4"`) ||
		strings.Contains(confirm, `name="id" value="otp-1"`) || !strings.Contains(confirm, "still pending") ||
		!strings.Contains(confirm, "no intent has this intentId") {
		t.Fatalf("confirmation: %d\n%s", code, confirm)
	}
	if _, err := svc.GetIntent(t.Context(), "otp-2~r1"); err == nil {
		t.Fatal("the confirmation acted")
	}
	code, _, done := b.do("POST", "/ui/bulk", url.Values{"csrf": {tok}, "action": {"resubmit"}, "confirm": {"yes"}, "id": {"otp-2", "otp-4"}})
	if code != http.StatusOK || !strings.Contains(done, "Resubmitted 2 of 2 intents.") || !strings.Contains(done, `href="/ui/intents/otp-2~r1"`) {
		t.Fatalf("results: %d\n%s", code, done)
	}
	// Again: both are resubmitted already, which the confirmation says.
	_, _, again := b.do("POST", "/ui/bulk", url.Values{"csrf": {tok}, "action": {"resubmit"}, "id": {"otp-2", "otp-4"}})
	if !strings.Contains(again, "already resubmitted as otp-2~r1") || strings.Contains(again, `id="bulk-confirm"`) {
		t.Fatalf("a second selection of the same intents:\n%s", again)
	}
	for name, form := range map[string]url.Values{
		"unknown action": {"csrf": {tok}, "action": {"delete"}, "id": {"otp-1"}},
		"no selection":   {"csrf": {tok}, "action": {"resubmit"}},
	} {
		if code, _, _ := b.do("POST", "/ui/bulk", form); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", name, code)
		}
	}
}

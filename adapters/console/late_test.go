package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// TestLateAcceptanceIsShownAndResubmittedOnlyWhenConfirmed pins what the
// console does with an intent the gateway accepted after its deadline: the
// list and the intent page show it (with the message id), the list filters
// on it, a bulk resubmission leaves it out and refuses it even when a form
// names it, and resubmitting it on its own needs the risk confirmed.
func TestLateAcceptanceIsShownAndResubmittedOnlyWhenConfirmed(t *testing.T) {
	b, svc, store := newConsole(t, nil)
	lease, _, _ := store.Acquire(t.Context(), ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "h", Duration: time.Hour})
	for _, id := range []string{"plain", "late"} {
		svc.create(t, id)
		if err := store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: lease.Fence(), IntentID: id, Number: 1, StartedAt: lease.AcquiredAt}); err != nil {
			t.Fatal(err)
		}
		p := ports.FinishAttemptParams{Fence: lease.Fence(), IntentID: id, Number: 1, FinishedAt: lease.AcquiredAt, Sent: true,
			Error: "timeout", Decision: core.Decision{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedDeadlineExceeded}}
		if id == "late" {
			p.Error, p.Outcome = "", &core.Outcome{Status: core.OutcomeAccepted, MessageID: "gw-msg-42"}
			p.Decision.AcceptedAfterDeadline, p.Decision.AcceptedMessageID = true, "gw-msg-42"
		}
		if err := store.FinishAttempt(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	_, _, page := b.do("GET", "/ui/intents/late", nil)
	if !strings.Contains(page, `id="accepted-after-deadline"`) || !strings.Contains(page, `<span id="accepted-message-id">gw-msg-42</span>`) ||
		!strings.Contains(page, `id="acknowledge-delivery-risk" required`) || !strings.Contains(page, "could deliver it twice. Resubmit it anyway?") {
		t.Fatalf("the intent page does not show the late acceptance and ask for the risk to be confirmed:\n%s", page)
	}
	tok := csrfOf(t, page)
	if _, _, page := b.do("GET", "/ui/intents/plain", nil); strings.Contains(page, `id="accepted-after-deadline"`) ||
		strings.Contains(page, `id="acknowledge-delivery-risk"`) {
		t.Fatalf("the intent page flags an intent the gateway did not accept:\n%s", page)
	}
	_, _, page = b.do("GET", "/ui/intents?status=exhausted", nil)
	if strings.Count(page, `class="error-text late-acceptance"`) != 1 || !strings.Contains(page, `id="bulk"`) {
		t.Fatalf("the list must mark exactly the late intent and offer the bulk action:\n%s", page)
	}
	_, _, page = b.do("GET", "/ui/intents?acceptedAfterDeadline=true", nil)
	if !strings.Contains(page, ">late<") || strings.Contains(page, ">plain<") || strings.Contains(page, `id="bulk"`) ||
		!strings.Contains(page, `id="accepted-after-deadline" checked`) {
		t.Fatalf("filtered list: want only late, the box checked, and no bulk link\n%s", page)
	}
	_, _, page = b.do("GET", "/ui/bulk-resubmit?status=exhausted", nil)
	if !strings.Contains(page, "1 exhausted intent(s)") || !strings.Contains(page, `id="bulk-doubtful"`) ||
		!strings.Contains(page, `name="id" value="plain"`) || strings.Contains(page, `value="late"`) {
		t.Fatalf("bulk confirmation must offer plain only and say one was left out:\n%s", page)
	}
	// A selection that holds it leaves it out, saying why.
	_, _, page = b.do("POST", "/ui/bulk", url.Values{"csrf": {tok}, "action": {"resubmit"}, "id": {"late", "plain"}})
	if !strings.Contains(page, `id="bulk-left-out"`) || !strings.Contains(page, "deliver it twice") ||
		!strings.Contains(page, `name="id" value="plain"`) || strings.Contains(page, `name="id" value="late"`) {
		t.Fatalf("bulk confirmation of a selection must offer plain only and say why late is left out:\n%s", page)
	}
	// A bulk form that names it anyway (forged, or stale) resubmits nothing.
	code, _, page := b.do("POST", "/ui/bulk", url.Values{"csrf": {tok}, "action": {"resubmit"}, "confirm": {"yes"}, "id": {"late"}})
	if code != http.StatusOK || !strings.Contains(page, "Resubmitted 0 of 1 intents") || !strings.Contains(page, "deliver it twice") {
		t.Fatalf("bulk naming the late intent: %d\n%s", code, page)
	}
	// On its own: refused without the confirmation, done with it.
	code, _, page = b.do("POST", "/ui/resubmit", url.Values{"csrf": {tok}, "id": {"late"}})
	if code != http.StatusConflict || !strings.Contains(page, "after its acceptance deadline (message gw-msg-42)") {
		t.Fatalf("resubmit without the confirmation: %d\n%s", code, page)
	}
	if _, err := svc.GetIntent(t.Context(), "late~r1"); err == nil {
		t.Fatal("the late intent was resubmitted without the confirmation")
	}
	code, h, _ := b.do("POST", "/ui/resubmit", url.Values{"csrf": {tok}, "id": {"late"}, "acknowledgeDeliveryRisk": {"true"}})
	if code != http.StatusSeeOther || h.Get("Location") != "/ui/intents/late~r1" {
		t.Fatalf("resubmit with the confirmation: %d to %q", code, h.Get("Location"))
	}
}

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

// TestBulkCancelOfASelection: the list's bulk actions offer Cancel; the
// confirmation of a selection offers only its pending intents with no
// attempt in flight and says why the others are left out; confirmed, each
// is cancelled as the session's operator (the intent's history names the
// console), and a form that names an intent in flight anyway cancels
// nothing of it.
func TestBulkCancelOfASelection(t *testing.T) {
	b, svc, csrf := signedIn(t)
	for _, id := range []string{"c-1", "c-2", "busy", "ended"} {
		svc.create(t, id)
	}
	lease, _, err := svc.store.Acquire(t.Context(), ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "sm-1", Duration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"busy", "ended"} {
		if err := svc.store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: lease.Fence(), IntentID: id, Number: 1, StartedAt: svc.clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.store.FinishAttempt(t.Context(), ports.FinishAttemptParams{Fence: lease.Fence(), IntentID: "ended", Number: 1,
		FinishedAt: svc.clock.Now(), Sent: true, Outcome: &core.Outcome{Status: core.OutcomeAccepted},
		Decision: core.Decision{Status: core.StatusAccepted, FinalOutcome: &core.Outcome{Status: core.OutcomeAccepted}}}); err != nil {
		t.Fatal(err)
	}
	_, _, page := b.do("GET", "/ui/intents", nil)
	if !strings.Contains(page, `<option value="cancel">Cancel</option>`) {
		t.Fatalf("the list's bulk actions do not offer Cancel:\n%s", page)
	}
	code, _, confirm := b.do("POST", "/ui/bulk", url.Values{"csrf": {csrf}, "action": {"cancel"}, "id": {"c-1", "c-2", "busy", "ended"}})
	if code != http.StatusOK || !strings.Contains(confirm, "2 of the 4 selected intents: Cancel 2 intent(s)?") ||
		!strings.Contains(confirm, `name="id" value="c-1"`) || !strings.Contains(confirm, `name="id" value="c-2"`) ||
		strings.Contains(confirm, `name="id" value="busy"`) || strings.Contains(confirm, `name="id" value="ended"`) ||
		!strings.Contains(confirm, "an attempt is in flight") || !strings.Contains(confirm, "it has ended") {
		t.Fatalf("bulk cancel confirmation: %d\n%s", code, confirm)
	}
	for _, id := range []string{"c-1", "c-2", "busy"} {
		if in, _ := svc.GetIntent(t.Context(), id); in.Status != core.StatusPending {
			t.Fatalf("the confirmation changed %s: %s", id, in.Status)
		}
	}
	code, _, done := b.do("POST", "/ui/bulk", url.Values{"csrf": {csrf}, "action": {"cancel"}, "confirm": {"yes"}, "id": {"c-1", "c-2", "busy"}})
	if code != http.StatusOK || !strings.Contains(done, "Cancelled 2 of 3 intents.") || !strings.Contains(done, "an attempt is in flight") {
		t.Fatalf("bulk cancel: %d\n%s", code, done)
	}
	for _, id := range []string{"c-1", "c-2"} {
		in, _ := svc.GetIntent(t.Context(), id)
		if in.Status != core.StatusExhausted || in.ExhaustedReason != core.ExhaustedCancelled || len(in.Events) != 1 ||
			in.Events[0].Action != core.ActionCancel || in.Events[0].Actor.Surface != ports.SurfaceConsole || in.Events[0].Actor.Role != core.RoleOperator {
			t.Fatalf("%s after the bulk cancel: %s (%s), events %+v", id, in.Status, in.ExhaustedReason, in.Events)
		}
	}
	if in, _ := svc.GetIntent(t.Context(), "busy"); in.Status != core.StatusPending || len(in.Events) != 0 {
		t.Fatalf("the intent in flight was changed: %s, events %+v", in.Status, in.Events)
	}
	_, _, again := b.do("POST", "/ui/bulk", url.Values{"csrf": {csrf}, "action": {"cancel"}, "id": {"c-1"}})
	if !strings.Contains(again, "already cancelled") || strings.Contains(again, `id="bulk-confirm"`) {
		t.Fatalf("a cancelled intent must be left out as already cancelled:\n%s", again)
	}
}

package console_test

import (
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// TestIntentPageSaysWhichAttemptsWereSent: an attempt closed as never sent
// reads "no" in the attempts' sent column, a sent one and one in flight
// "yes", so an operator counts tries without reading error texts.
func TestIntentPageSaysWhichAttemptsWereSent(t *testing.T) {
	b, svc, store := newConsole(t, nil)
	lease, _, _ := store.Acquire(t.Context(), ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "h", Duration: time.Hour})
	svc.create(t, "tries")
	at := lease.AcquiredAt
	for n, sent := range []bool{false, true} {
		if err := store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: lease.Fence(), IntentID: "tries", Number: n + 1, StartedAt: at}); err != nil {
			t.Fatal(err)
		}
		if err := store.FinishAttempt(t.Context(), ports.FinishAttemptParams{Fence: lease.Fence(), IntentID: "tries", Number: n + 1,
			FinishedAt: at, Sent: sent, Error: "timeout", Decision: core.Decision{Status: core.StatusPending, NextDueAt: at}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: lease.Fence(), IntentID: "tries", Number: 3, StartedAt: at}); err != nil {
		t.Fatal(err)
	}
	_, _, page := b.do("GET", "/ui/intents/tries", nil)
	if got := strings.Count(page, `<td class="sent">no</td>`); got != 1 {
		t.Fatalf("%d attempts shown as not sent, want 1:\n%s", got, page)
	}
	if got := strings.Count(page, `<td class="sent">yes</td>`); got != 2 {
		t.Fatalf("%d attempts shown as sent, want 2 (one sent, one in flight):\n%s", got, page)
	}
}

package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/submissionmanager/submission-manager/api/client"
)

// TestConsoleAutoRefreshKeepsSelectionsAndActionsTrue drives auto-refresh against
// the intents list's bulk selection and an intent's actions, in a real
// headless Chromium: rows swapped in by a refresh can be selected (the
// count follows), a selection holds the list still (a new intent waits
// until the selection is cleared), and an intent that ends while its page
// is open reloads the page, which then offers Resubmit instead of Run now
// and Cancel and lists the cancel.
func TestConsoleAutoRefreshKeepsSelectionsAndActionsTrue(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser; not run with -short")
	}
	ctx := newBrowser(t)
	svc, _ := startStandard(t)
	// Scheduled an hour ahead, the intents stay pending and the list
	// changes only when the test submits.
	submitLater(t, svc.api, "live-1", "sms.realtime")
	submitLater(t, svc.api, "live-2", "sms.realtime")
	base := svc.srv.URL() + "/ui/"

	var rows []string
	readRows := chromedp.Evaluate(`[...document.querySelectorAll('#intents tbody tr[data-intent-id]')].map(tr => tr.dataset.intentId)`, &rows)
	poll := func(cond string) chromedp.Action {
		return chromedp.Poll(cond, nil, chromedp.WithPollingTimeout(30*time.Second))
	}
	var kept bool
	sameDocument := chromedp.Evaluate(`window.sameDocument === true`, &kept)

	run(t, ctx, "open the list and turn auto-refresh on",
		chromedp.Navigate(base+"intents"),
		chromedp.WaitVisible("#autorefresh", chromedp.ByID),
		chromedp.Click("#autorefresh", chromedp.ByID),
		chromedp.Evaluate(`window.sameDocument = true`, nil),
	)
	submitLater(t, svc.api, "live-3", "sms.realtime")
	var count string
	run(t, ctx, "a new intent is swapped in, and its row can be selected",
		poll(`document.querySelector('#intents tr[data-intent-id="live-3"]') !== null`),
		sameDocument,
		chromedp.Click("#select-all", chromedp.ByID),
		chromedp.Text("#selected-count", &count, chromedp.ByID),
		chromedp.Evaluate(`document.activeElement.blur()`, nil),
	)
	if !kept || count != "3 selected" {
		t.Fatalf("after a refresh: same document %v, select all counts %q, want 3", kept, count)
	}

	// A selection holds the list: a round passes with live-4 in the
	// database and the list still without it, the selection intact.
	submitLater(t, svc.api, "live-4", "sms.realtime")
	var checked int
	run(t, ctx, "a round is skipped while rows are selected",
		chromedp.Evaluate(`document.documentElement.removeAttribute('data-refresh-paused')`, nil),
		poll(`document.documentElement.getAttribute('data-refresh-paused') === 'selection'`),
		readRows,
		chromedp.Evaluate(`document.querySelectorAll('#intents input.select:checked').length`, &checked),
	)
	if slices.Contains(rows, "live-4") || checked != 3 {
		t.Fatalf("while selected the list shows %v with %d checked, want it held with 3", rows, checked)
	}
	run(t, ctx, "clearing the selection lets the list refresh",
		chromedp.Click("#select-all", chromedp.ByID),
		chromedp.Text("#selected-count", &count, chromedp.ByID),
		chromedp.Evaluate(`document.activeElement.blur()`, nil),
		poll(`document.querySelector('#intents tr[data-intent-id="live-4"]') !== null`),
		sameDocument,
	)
	if count != "0 selected" || !kept {
		t.Fatalf("after clearing: count %q, same document %v", count, kept)
	}

	// An intent that ends while its page is open: the page reloads and
	// offers what an ended intent has.
	run(t, ctx, "open a pending intent",
		chromedp.Navigate(base+"intents/live-1"),
		chromedp.WaitVisible("#cancel", chromedp.ByID),
		chromedp.Evaluate(`window.sameDocument = true`, nil),
	)
	res, err := svc.api.CancelIntentWithResponse(context.Background(), "live-1", client.IntentActionRequest{})
	if err != nil || res.JSON200 == nil {
		t.Fatalf("cancelling live-1: %v %s", err, res.Body)
	}
	var status string
	var actions []string
	var forms int
	run(t, ctx, "the ended intent's page",
		// The reload is a navigation: a query waits through it, a poll would not.
		chromedp.WaitVisible("#resubmit-form", chromedp.ByID),
		sameDocument,
		chromedp.Text("#intent-status", &status, chromedp.ByID),
		chromedp.Evaluate(`[...document.querySelectorAll('#events td.event-action')].map(e => e.textContent.trim())`, &actions),
		chromedp.Evaluate(`document.querySelectorAll('#cancel-form, #run-now-form').length`, &forms),
	)
	if kept || status != "exhausted" || !slices.Equal(actions, []string{"cancel"}) || forms != 0 {
		t.Fatalf("after the cancel: swapped in place %v, status %q, actions %v, %d action forms; want a reload showing exhausted, the cancel and no action forms",
			kept, status, actions, forms)
	}
}

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
)

// TestConsoleSearchesPagesAndActsOnASelection drives the intents list in a
// real headless Chromium against the real service: a search by intentId
// prefix paged forwards and back, a search by the latest outcome, the
// intentId box that lists what starts with it, and a bulk resubmission of
// selected rows, confirmed with its count.
func TestConsoleSearchesPagesAndActsOnASelection(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser; not run with -short")
	}
	ctx := newBrowser(t)
	const operatorKey = "operator-key-for-the-search-browser-test"
	svc, sim := startStandard(t, func(c *command.ServeConfig) { c.OperatorKeys = []string{operatorKey} })
	api, err := client.NewClientWithResponses(svc.srv.URL(), client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+operatorKey)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	// 28 otp intents (a page of 25 and three more), three of them rejected
	// for their recipient, and some orders that no search for otp finds.
	rejected := []string{"otp-05", "otp-06", "otp-07"}
	var ids []string
	for i := range 28 {
		id := fmt.Sprintf("otp-%02d", i)
		if slices.Contains(rejected, id) {
			script(t, sim, id, gatewaysim.Rejected("invalid_recipient"))
		}
		mustCreate(t, api, id, "sms.realtime", `{"to":"+15550100","text":"code"}`)
		ids = append(ids, id)
		if i%7 == 0 {
			order := fmt.Sprintf("order-%02d", i)
			mustCreate(t, api, order, "sms.realtime", `{"to":"+15550100","text":"shipped"}`)
			ids = append(ids, order)
		}
	}
	for _, id := range ids {
		waitTerminal(t, api, id)
	}
	base := svc.srv.URL() + "/ui/"
	run(t, ctx, "sign in",
		chromedp.Navigate(base),
		chromedp.WaitVisible("#key", chromedp.ByID),
		chromedp.SendKeys("#key", operatorKey, chromedp.ByID),
		chromedp.Click("#signin", chromedp.ByID),
		chromedp.WaitVisible("#counts", chromedp.ByID),
	)

	var rows []string
	var hasPrev bool
	readRows := chromedp.Evaluate(`[...document.querySelectorAll('#intents tbody tr[data-intent-id]')].map(tr => tr.dataset.intentId)`, &rows)
	readPrev := chromedp.Evaluate(`document.getElementById('prev') !== null`, &hasPrev)

	// Search by prefix: a full page, newest first, then the rest, then back.
	run(t, ctx, "search by prefix",
		chromedp.Navigate(base+"intents"),
		chromedp.WaitVisible("#filters", chromedp.ByID),
		chromedp.SendKeys("#prefix", "otp-", chromedp.ByID),
		chromedp.Click("#apply", chromedp.ByID),
		chromedp.WaitReady(`#prefix[value="otp-"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#next", chromedp.ByID),
		readRows, readPrev,
	)
	first := slices.Clone(rows)
	if len(first) != 25 || first[0] != "otp-27" || first[24] != "otp-03" || hasPrev {
		t.Fatalf("first page %v (previous link %v), want otp-27 to otp-03 and no previous page", first, hasPrev)
	}
	run(t, ctx, "next page",
		chromedp.Click("#next", chromedp.ByID),
		chromedp.WaitVisible("#prev", chromedp.ByID),
		readRows,
	)
	if !slices.Equal(rows, []string{"otp-02", "otp-01", "otp-00"}) {
		t.Fatalf("second page %v, want the three oldest otp intents", rows)
	}
	run(t, ctx, "previous page",
		chromedp.Click("#prev", chromedp.ByID),
		chromedp.WaitNotPresent("#prev", chromedp.ByID),
		chromedp.WaitVisible("#next", chromedp.ByID),
		readRows,
	)
	if !slices.Equal(rows, first) {
		t.Fatalf("back on the first page: %v, want %v", rows, first)
	}

	// The intentId box: no intent is named otp-0, so it lists those whose
	// intentId starts with it.
	var notice string
	run(t, ctx, "find by the start of an intentId",
		chromedp.SendKeys("#q", "otp-0", chromedp.ByID),
		chromedp.Click("#find", chromedp.ByID),
		chromedp.WaitVisible(`#prefix[value="otp-0"]`, chromedp.ByQuery),
		chromedp.Text(".notice", &notice, chromedp.ByQuery),
		readRows,
	)
	if len(rows) != 10 || rows[0] != "otp-09" || !strings.Contains(notice, "starts with") {
		t.Fatalf("find otp-0: %v, notice %q", rows, notice)
	}

	// Search by the latest outcome, select two rows and resubmit them.
	var lastResults []string
	var count string
	run(t, ctx, "search by outcome",
		chromedp.Navigate(base+"intents?prefix=otp-"),
		chromedp.WaitVisible("#result", chromedp.ByID),
		chromedp.SendKeys("#result", "Invalid_Recipient", chromedp.ByID),
		chromedp.Click("#apply", chromedp.ByID),
		chromedp.WaitReady(`#result[value="Invalid_Recipient"]`, chromedp.ByQuery),
		readRows,
		chromedp.Evaluate(`[...document.querySelectorAll('#intents td.last-result')].map(td => td.textContent.trim())`, &lastResults),
	)
	if !slices.Equal(rows, []string{"otp-07", "otp-06", "otp-05"}) {
		t.Fatalf("outcome search: %v", rows)
	}
	for _, r := range lastResults {
		if r != "rejected: invalid_recipient" {
			t.Fatalf("last outcome column %v", lastResults)
		}
	}
	var disabled bool
	// The page's script counts the selection once the document has loaded
	// (without script the button stays enabled and the server counts), so
	// the test waits for its count before it reads the button.
	run(t, ctx, "select all, then two",
		chromedp.Poll(`document.getElementById('selected-count').textContent === '0 selected'`, nil,
			chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Evaluate(`document.getElementById('bulk-apply').disabled`, &disabled),
	)
	if !disabled {
		t.Fatal("the bulk action is offered with nothing selected")
	}
	run(t, ctx, "select",
		chromedp.Click("#select-all", chromedp.ByID),
		chromedp.Text("#selected-count", &count, chromedp.ByID),
	)
	if count != "3 selected" {
		t.Fatalf("select all counts %q", count)
	}
	run(t, ctx, "unselect one",
		chromedp.Click(`#intents input.select[value="otp-05"]`, chromedp.ByQuery),
		chromedp.Text("#selected-count", &count, chromedp.ByID),
	)
	if count != "2 selected" {
		t.Fatalf("after unselecting one: %q", count)
	}
	var confirm string
	run(t, ctx, "review the selection",
		chromedp.SetValue("#bulk-action", "resubmit", chromedp.ByID),
		chromedp.Click("#bulk-apply", chromedp.ByID),
		chromedp.WaitVisible("#bulk-confirm", chromedp.ByID),
		chromedp.Text("#bulk-count", &confirm, chromedp.ByID),
	)
	if !strings.Contains(confirm, "2 of the 2 selected intents") {
		t.Fatalf("confirmation says %q", confirm)
	}
	var results, button string
	run(t, ctx, "confirm",
		chromedp.Text("#bulk-confirm", &button, chromedp.ByID),
		chromedp.Click("#bulk-confirm", chromedp.ByID),
		chromedp.WaitVisible("#bulk-results", chromedp.ByID),
		chromedp.Text("#bulk-results", &results, chromedp.ByID),
		chromedp.Text(".notice", &notice, chromedp.ByQuery),
	)
	if button != "Resubmit 2 intents" || notice != "Resubmitted 2 of 2 intents." ||
		!strings.Contains(results, "otp-07~r1") || !strings.Contains(results, "otp-06~r1") {
		t.Fatalf("button %q, results %q, notice %q", button, results, notice)
	}
	for _, id := range []string{"otp-06", "otp-07"} {
		if in := getIntent(t, api, id); in.ResubmittedAs == nil || *in.ResubmittedAs != id+"~r1" {
			t.Errorf("the API does not show %s resubmitted: %v", id, in.ResubmittedAs)
		}
	}
	if in := getIntent(t, api, "otp-05"); in.ResubmittedAs != nil {
		t.Errorf("the unselected otp-05 was resubmitted as %s", *in.ResubmittedAs)
	}
}

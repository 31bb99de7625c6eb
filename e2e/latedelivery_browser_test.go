package e2e

import (
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/client"
)

// TestLateAcceptanceInTheConsole drives the console in a real headless
// Chromium over an intent the gateway accepted after its deadline: the
// list marks it, the bulk resubmission of the exhausted intents leaves it
// out and says why, its page shows the fact and the message id, the
// resubmit button does nothing until the operator ticks the box naming the
// risk, and the confirmation dialog names it too.
func TestLateAcceptanceInTheConsole(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser; not run with -short")
	}
	ctx := newBrowser(t)
	var mu sync.Mutex
	var dialogs []string
	chromedp.ListenTarget(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			mu.Lock()
			dialogs = append(dialogs, d.Message)
			mu.Unlock()
		}
	})
	svc, sim, api := startLate(t, stores[0], gatewaysim.Config{Latency: lateLatency})
	script(t, sim, "plain-1", gatewaysim.Rejected("provider_failure"))
	mustCreate(t, api, "plain-1", "push.oneshot", `{"token":"t"}`)
	mustCreate(t, api, "late-1", "sms.late", `{"to":"+15550100","text":"hello"}`)
	waitTerminal(t, api, "plain-1")
	if in := waitTerminal(t, api, "late-1"); in.AcceptedAfterDeadline == nil || in.AcceptedMessageId == nil {
		t.Fatalf("late-1 ended %s without the flag", in.Status)
	}
	message := gatewayMessageID(t, sim, "late-1")
	base := svc.srv.URL() + "/ui/"

	run(t, ctx, "sign in",
		chromedp.Navigate(base),
		chromedp.WaitVisible("#key", chromedp.ByID),
		chromedp.SendKeys("#key", lateOperatorKey, chromedp.ByID),
		chromedp.Click("#signin", chromedp.ByID),
		chromedp.WaitVisible("#counts", chromedp.ByID),
	)

	// The list of exhausted intents marks late-1, and only it.
	var marked []string
	run(t, ctx, "list the exhausted intents",
		chromedp.Navigate(base+"intents?status=exhausted"),
		chromedp.WaitVisible("#intents", chromedp.ByID),
		chromedp.Evaluate(`[...document.querySelectorAll('#intents tbody tr')].filter(tr => tr.querySelector('.late-acceptance'))
			.map(tr => tr.querySelector('a.intent-link').textContent.trim())`, &marked),
	)
	if len(marked) != 1 || marked[0] != "late-1" {
		t.Fatalf("the list marks %v, want late-1 only", marked)
	}

	// The bulk resubmission offers plain-1 and says one was left out.
	var offered []string
	var doubtful string
	run(t, ctx, "open the bulk resubmission",
		chromedp.Click("#bulk", chromedp.ByID),
		chromedp.WaitVisible("#bulk-form", chromedp.ByID),
		chromedp.Evaluate(`[...document.querySelectorAll('#bulk-form input[name=id]')].map(e => e.value)`, &offered),
		chromedp.Text("#bulk-doubtful", &doubtful, chromedp.ByID),
	)
	if len(offered) != 1 || offered[0] != "plain-1" || !strings.HasPrefix(doubtful, "1 intent(s) the gateway may already have delivered left out") {
		t.Fatalf("bulk offers %v and says %q; want plain-1 only and late-1 left out", offered, doubtful)
	}

	// late-1's page shows the fact; the form is not sent without the box.
	var fact string
	var blocked bool
	run(t, ctx, "open late-1",
		chromedp.Navigate(base+"intents/late-1"),
		chromedp.WaitVisible("#accepted-after-deadline", chromedp.ByID),
		chromedp.Text("#accepted-after-deadline", &fact, chromedp.ByID),
		chromedp.Evaluate(`!document.getElementById('resubmit-form').checkValidity() &&
			document.getElementById('acknowledge-delivery-risk').validity.valueMissing`, &blocked),
	)
	if !strings.Contains(fact, "(message "+message+")") || !blocked {
		t.Fatalf("late-1's page says %q; the form is blocked without the box: %v", fact, blocked)
	}
	screenshot(t, ctx, "console-accepted-after-deadline")
	if got := getIntent(t, api, "late-1"); got.ResubmittedAs != nil {
		t.Fatalf("late-1 was resubmitted without the confirmation, as %s", *got.ResubmittedAs)
	}

	// Ticked and confirmed, it is resubmitted.
	var id string
	run(t, ctx, "resubmit with the risk confirmed",
		chromedp.Click("#acknowledge-delivery-risk", chromedp.ByID),
		chromedp.Click("#resubmit", chromedp.ByID),
		chromedp.WaitVisible("#resubmitted-from", chromedp.ByID),
		chromedp.Text("#intent-id", &id, chromedp.ByID),
	)
	if id != "late-1~r1" {
		t.Fatalf("after resubmitting: intent %q", id)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialogs) != 1 || !strings.Contains(dialogs[0], "could deliver it twice") {
		t.Fatalf("confirmation dialogs %q, want one naming the risk", dialogs)
	}
	if in := getIntent(t, api, "late-1"); in.ResubmittedAs == nil || *in.ResubmittedAs != "late-1~r1" ||
		in.Status != client.IntentStatusExhausted {
		t.Fatalf("late-1 after the resubmission: %s, resubmitted as %v", in.Status, in.ResubmittedAs)
	}
}

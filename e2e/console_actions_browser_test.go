package e2e

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
)

// sessionTag is how an intent's history names a console session.
var sessionTag = regexp.MustCompile(`^[0-9a-f]{12}$`)

// TestConsoleActionsInABrowser drives the intent page's actions in a real
// headless Chromium: an operator signs in, makes a scheduled intent due
// now and cancels another, each after the page's confirmation; the pages
// show the actions in the intents' history, and the API shows the same
// events, naming the console and the session's tag, never the key.
func TestConsoleActionsInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser; not run with -short")
	}
	ctx := newBrowser(t)
	var (
		mu      sync.Mutex
		dialogs []string
	)
	chromedp.ListenTarget(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			mu.Lock()
			dialogs = append(dialogs, d.Message)
			mu.Unlock()
		}
	})
	const operatorKey = "operator-key-for-the-actions-test"
	svc, _ := startStandard(t, func(c *command.ServeConfig) { c.OperatorKeys = []string{operatorKey} })
	api, err := client.NewClientWithResponses(svc.srv.URL(), client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+operatorKey)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	submitLater(t, api, "to-run-now", "sms.realtime")
	submitLater(t, api, "to-cancel", "sms.realtime")
	base := svc.srv.URL() + "/ui/"
	run(t, ctx, "sign in",
		chromedp.Navigate(base),
		chromedp.WaitVisible("#key", chromedp.ByID),
		chromedp.SendKeys("#key", operatorKey, chromedp.ByID),
		chromedp.Click("#signin", chromedp.ByID),
		chromedp.WaitVisible("#counts", chromedp.ByID),
	)

	// Run now: the intent page comes back with the action in its history.
	var action, status string
	run(t, ctx, "run now",
		chromedp.Navigate(base+"intents/to-run-now"),
		chromedp.WaitVisible("#run-now", chromedp.ByID),
		chromedp.Click("#run-now", chromedp.ByID),
		chromedp.WaitVisible("#events", chromedp.ByID),
		chromedp.Text("#events td.event-action", &action, chromedp.ByQuery),
	)
	if action != "run_now" {
		t.Fatalf("the page shows the action %q, want run_now", action)
	}
	checkConsoleEvent(t, api, "to-run-now", client.EventActionRunNow)

	// Cancel: the page shows the intent exhausted, cancelled, with no action
	// left to take.
	var actions []string
	var forms int
	run(t, ctx, "cancel",
		chromedp.Navigate(base+"intents/to-cancel"),
		chromedp.WaitVisible("#cancel", chromedp.ByID),
		chromedp.Click("#cancel", chromedp.ByID),
		chromedp.WaitVisible("#events", chromedp.ByID),
		chromedp.Text("#intent-status", &status, chromedp.ByID),
		chromedp.Evaluate(`[...document.querySelectorAll('#events td.event-action')].map(e => e.textContent.trim())`, &actions),
		chromedp.Evaluate(`document.querySelectorAll('#cancel-form, #run-now-form').length`, &forms),
	)
	if status != "exhausted" || len(actions) != 1 || actions[0] != "cancel" || forms != 0 {
		t.Fatalf("after the cancel the page shows %q with actions %v and %d action forms", status, actions, forms)
	}
	in := checkConsoleEvent(t, api, "to-cancel", client.EventActionCancel)
	if in.ExhaustedReason == nil || *in.ExhaustedReason != client.Cancelled || len(in.Attempts) != 0 {
		t.Fatalf("the API shows the cancelled intent as %s/%v with %d attempts", in.Status, in.ExhaustedReason, len(in.Attempts))
	}

	// Each action asked first.
	mu.Lock()
	defer mu.Unlock()
	if len(dialogs) != 2 || !strings.HasPrefix(dialogs[0], "Make this intent's next try due now?") ||
		!strings.HasPrefix(dialogs[1], "Cancel this intent?") {
		t.Fatalf("confirmations shown: %q, want one per action", dialogs)
	}
}

// checkConsoleEvent reads the intent through the API and checks that its
// history holds exactly the action, by the console's operator, with the
// session's tag.
func checkConsoleEvent(t *testing.T, api *client.ClientWithResponses, id string, want client.IntentEventAction) client.Intent {
	t.Helper()
	in := getIntent(t, api, id)
	if in.Events == nil || len(*in.Events) != 1 {
		t.Fatalf("%s: events %+v, want one", id, in.Events)
	}
	e := (*in.Events)[0]
	if e.Action != want || e.Surface != client.EventSurfaceConsole || e.Role != client.EventRoleOperator ||
		e.Session == nil || !sessionTag.MatchString(*e.Session) {
		t.Fatalf("%s: event %+v (session %v), want %s by the console's operator with a session tag", id, e, e.Session, want)
	}
	return in
}

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
)

// screenshotsEnv names the directory, relative to the repository root, the
// browser test writes the console's screenshots to (docs/img in the docs).
const screenshotsEnv = "SUBMISSION_CONSOLE_SCREENSHOTS"

// chromiumPath finds Debian's chromium. Outside CI a missing browser skips
// the test with the reason; in CI (.ci/run installs it) it fails.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("CHROMIUM"), "chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const reason = "no chromium on PATH (install Debian's chromium: apt-get install -y chromium; .ci/run does); the console browser test needs a real headless browser"
	if os.Getenv("CI") != "" {
		t.Fatal(reason)
	}
	t.Skip(reason)
	return ""
}

// newBrowser starts a headless Chromium with a fresh profile; confirmation
// dialogs are accepted, as an operator would.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	// A fresh profile, removed by the test itself: Chromium's helper
	// processes may still write to it for a moment after the browser
	// exits, which t.TempDir's cleanup reports as an error.
	profile, err := os.MkdirTemp("", "console-browser-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
		for range 100 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Logf("could not remove the browser profile %s", profile)
	})
	chromedp.ListenTarget(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			// The listener must not block; the answer is one CDP call.
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(true)) }()
		}
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// screenshot writes the page to the screenshot directory when one is set.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		return
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join("..", dir) // tests run in e2e/
	}
	var png []byte
	run(t, ctx, "screenshot "+name, chromedp.FullScreenshot(&png, 100))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// countsByAPI counts intents per target and status through the API.
func countsByAPI(t *testing.T, c *client.ClientWithResponses) map[string]map[string]int {
	t.Helper()
	out := map[string]map[string]int{}
	params := client.ListIntentsParams{Limit: ptrTo(100)}
	for {
		res, err := c.ListIntentsWithResponse(context.Background(), &params)
		if err != nil || res.JSON200 == nil {
			t.Fatalf("listing intents: %v %s", err, res.Body)
		}
		for _, in := range res.JSON200.Intents {
			if out[in.SubmissionTarget] == nil {
				out[in.SubmissionTarget] = map[string]int{}
			}
			out[in.SubmissionTarget][string(in.Status)]++
		}
		if res.JSON200.NextCursor == nil {
			return out
		}
		params.Cursor = res.JSON200.NextCursor
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestConsoleInABrowser drives the console in a real headless Chromium:
// sign in, the overview's numbers against the API, filtering and paging,
// an intent's attempts, resubmitting an exhausted intent, and a payload
// with markup shown as text.
func TestConsoleInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser; not run with -short")
	}
	ctx := newBrowser(t)
	const operatorKey, clientKey = "operator-key-for-the-browser-test", "client-key"
	svc, sim := startStandard(t, func(c *command.ServeConfig) {
		c.OperatorKeys, c.APIKeys = []string{operatorKey}, []string{clientKey}
		c.HolderID = "browser-leader"
	})
	api, err := client.NewClientWithResponses(svc.srv.URL(), client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+operatorKey)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	// 30 accepted intents (more than a page), one exhausted, one whose
	// payload carries markup.
	for i := range 30 {
		mustCreate(t, api, fmt.Sprintf("order-%02d", i), "sms.realtime", `{"to":"+15550100","text":"shipped"}`)
	}
	script(t, sim, "dead-letter-1", gatewaysim.Rejected("provider_failure"))
	mustCreate(t, api, "dead-letter-1", "push.oneshot", `{"token":"device-1","title":"hello"}`)
	const markup = `<script>document.title='pwned'</script><img src=x onerror="document.title='pwned'">`
	// Sent as raw bytes: the SDK's encoder would escape < and > as \u003c.
	if res := submitBody(t, api, `{"intentId":"markup-1","submissionTarget":"sms.realtime","payload":{"to":"+15550100","text":"`+
		strings.ReplaceAll(markup, `"`, `\"`)+`"}}`); res.StatusCode() != http.StatusCreated {
		t.Fatalf("submitting markup-1: %d %s", res.StatusCode(), res.Body)
	}
	for i := range 30 {
		waitTerminal(t, api, fmt.Sprintf("order-%02d", i))
	}
	if in := waitTerminal(t, api, "dead-letter-1"); in.Status != client.IntentStatusExhausted {
		t.Fatalf("dead-letter-1 ended %s, want exhausted", in.Status)
	}
	waitTerminal(t, api, "markup-1")
	base := svc.srv.URL() + "/ui/"

	// Sign in: the console sends an unsigned browser to the form.
	var location string
	run(t, ctx, "sign in",
		chromedp.Navigate(base),
		chromedp.WaitVisible("#key", chromedp.ByID),
		chromedp.Location(&location),
	)
	if !strings.HasSuffix(location, "/ui/signin") {
		t.Fatalf("unsigned browser at %s, want the sign-in form", location)
	}
	run(t, ctx, "submit the key",
		chromedp.SendKeys("#key", operatorKey, chromedp.ByID),
		chromedp.Click("#signin", chromedp.ByID),
		chromedp.WaitVisible("#counts", chromedp.ByID),
	)

	// The overview's counts are the API's.
	var shown map[string]map[string]string
	run(t, ctx, "read the counts", chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#counts tbody tr[data-target]')].map(tr =>
		[tr.dataset.target, Object.fromEntries([...tr.querySelectorAll('td[data-status]')].map(td => [td.dataset.status, td.textContent.trim()]))]))`, &shown))
	want := countsByAPI(t, api)
	for target, byStatus := range want {
		for status, n := range byStatus {
			if got := shown[target][status]; got != fmt.Sprint(n) {
				t.Errorf("overview shows %s/%s = %q, the API lists %d", target, status, got, n)
			}
		}
	}
	if shown["sms.realtime"]["accepted"] != "31" || shown["push.oneshot"]["exhausted"] != "1" {
		t.Errorf("overview counts %v", shown)
	}
	var role, holder string
	run(t, ctx, "read the lease", chromedp.Text("#role", &role, chromedp.ByID), chromedp.Text("#lease-holder", &holder, chromedp.ByID))
	if role != "leader" || holder != "browser-leader" {
		t.Errorf("overview role %q holder %q, want leader browser-leader", role, holder)
	}
	screenshot(t, ctx, "console-overview")

	// Filter and page the list.
	var rows, statuses []string
	rowTexts := func(sel string, out *[]string) chromedp.Action {
		return chromedp.Evaluate(fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => e.textContent.trim())`, sel), out)
	}
	run(t, ctx, "filter the list",
		chromedp.Navigate(base+"intents"),
		chromedp.WaitVisible("#filters", chromedp.ByID),
		chromedp.SetValue("#status", "accepted", chromedp.ByID),
		chromedp.SetValue("#target", "sms.realtime", chromedp.ByID),
		chromedp.Click("#apply", chromedp.ByID),
		// The selected attribute is rendered only by the filtered page.
		chromedp.WaitReady(`#status option[value="accepted"][selected]`, chromedp.ByQuery),
		chromedp.WaitVisible("#next", chromedp.ByID),
		rowTexts("#intents a.intent-link", &rows),
		rowTexts("#intents td.status", &statuses),
	)
	if len(rows) != 25 || rows[0] != "markup-1" {
		t.Fatalf("first page %v, want 25 intents newest first", rows)
	}
	for _, s := range statuses {
		if s != "accepted" {
			t.Fatalf("filtered list shows status %q", s)
		}
	}
	screenshot(t, ctx, "console-intents")
	run(t, ctx, "next page",
		chromedp.Click("#next", chromedp.ByID),
		chromedp.WaitVisible("#first", chromedp.ByID),
		rowTexts("#intents a.intent-link", &rows),
	)
	if len(rows) != 6 || rows[5] != "order-00" {
		t.Fatalf("second page %v, want the 6 oldest", rows)
	}

	// Find an intent by id and see its attempts.
	var id, attempts string
	run(t, ctx, "search",
		chromedp.SendKeys("#q", "order-07", chromedp.ByID),
		chromedp.Click("#find", chromedp.ByID),
		chromedp.WaitVisible("#attempts", chromedp.ByID),
		chromedp.Text("#intent-id", &id, chromedp.ByID),
		chromedp.Text("#attempts tbody", &attempts, chromedp.ByQuery),
	)
	if id != "order-07" || !strings.Contains(attempts, "browser-leader") || !strings.Contains(attempts, "accepted") {
		t.Fatalf("intent page %q, attempts %q", id, attempts)
	}

	// Markup in a payload is text.
	var payload, title string
	var scripts int
	run(t, ctx, "markup payload",
		chromedp.Navigate(base+"intents/markup-1"),
		chromedp.WaitVisible("#payload", chromedp.ByID),
		chromedp.Text("#payload", &payload, chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll('main script, main img').length`, &scripts),
		chromedp.Title(&title),
	)
	if !strings.Contains(payload, "<script>document.title='pwned'</script>") || scripts != 0 || strings.Contains(title, "pwned") {
		t.Fatalf("payload shown as %q, %d elements from data, title %q", payload, scripts, title)
	}

	// Resubmit the exhausted intent and follow the link both ways.
	var from, as string
	run(t, ctx, "resubmit",
		chromedp.Navigate(base+"intents/dead-letter-1"),
		chromedp.WaitVisible("#resubmit", chromedp.ByID),
		chromedp.Click("#resubmit", chromedp.ByID),
		chromedp.WaitVisible("#resubmitted-from", chromedp.ByID),
		chromedp.Text("#intent-id", &id, chromedp.ByID),
		chromedp.Text("#resubmitted-from", &from, chromedp.ByID),
	)
	if id != "dead-letter-1~r1" || from != "dead-letter-1" {
		t.Fatalf("after resubmitting: intent %q from %q", id, from)
	}
	run(t, ctx, "original links forward",
		chromedp.Click("#resubmitted-from a", chromedp.ByQuery),
		chromedp.WaitVisible("#resubmitted-as", chromedp.ByID),
		chromedp.Text("#resubmitted-as", &as, chromedp.ByID),
	)
	if as != "dead-letter-1~r1" {
		t.Fatalf("original shows resubmitted as %q", as)
	}
	screenshot(t, ctx, "console-intent")
	if in := getIntent(t, api, "dead-letter-1"); in.ResubmittedAs == nil || *in.ResubmittedAs != "dead-letter-1~r1" {
		t.Fatalf("the API does not show the link: %+v", in.ResubmittedAs)
	}
}

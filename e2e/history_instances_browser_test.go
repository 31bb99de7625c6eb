package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/client"
)

// TestHistoryAndInstancesInABrowser drives the History and Instances pages
// in a real headless Chromium, against two instances on one database (a
// leader and an API-only one): the charts have both axes with their units
// and count what the API reports, the instances list shows who leads, and
// auto-refresh, off at first, is remembered and brings new counts in
// without reloading the page.
func TestHistoryAndInstancesInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser; not run with -short")
	}
	ctx := newBrowser(t)
	sim := startSimulator(t)
	dir := t.TempDir()
	registry := filepath.Join(dir, "targets.json")
	writeRegistry(t, registry, standardTargets(sim))
	leaderCfg := testConfig(dir, registry)
	leaderCfg.HolderID = "history-leader"
	leader := startService(t, leaderCfg)
	apiCfg := testConfig(dir, registry)
	apiCfg.HolderID, apiCfg.APIOnly = "history-api", true
	startService(t, apiCfg)

	// Ten accepted intents, one of them after an attempt error, and one
	// exhausted by a rejection.
	script(t, sim, "h-00", gatewaysim.Fault(gatewaysim.ModeNotJSON), gatewaysim.StepAccepted)
	for i := range 10 {
		mustCreate(t, leader.api, fmt.Sprintf("h-%02d", i), "sms.batch", `{"to":"+15550100","text":"hi"}`)
	}
	script(t, sim, "h-dead", gatewaysim.Rejected("provider_failure"))
	mustCreate(t, leader.api, "h-dead", "push.oneshot", `{"token":"device-1","title":"hello"}`)
	for i := range 10 {
		waitTerminal(t, leader.api, fmt.Sprintf("h-%02d", i))
	}
	if in := waitTerminal(t, leader.api, "h-dead"); in.Status != client.IntentStatusExhausted {
		t.Fatalf("h-dead ended %s", in.Status)
	}
	base := leader.srv.URL() + "/ui/"
	// An instance records a new role within about a second of taking it.
	waitInstances(t, leader.api, func(l client.InstanceList) bool {
		return len(l.Instances) == 2 && l.Instances[1].Role == client.Leader && l.Instances[1].HoldsLease
	})

	// The last hour: axes, units and the counts of what happened.
	var yLabels, xLabels []string
	var totals map[string]string
	readChart := func(id string) chromedp.Tasks {
		return chromedp.Tasks{
			chromedp.Evaluate(fmt.Sprintf(`[...document.querySelectorAll('#%s .axis-y text')].map(e => e.textContent.trim())`, id), &yLabels),
			chromedp.Evaluate(fmt.Sprintf(`[...document.querySelectorAll('#%s .axis-x text')].map(e => e.textContent.trim())`, id), &xLabels),
			chromedp.Evaluate(fmt.Sprintf(`Object.fromEntries([...document.querySelectorAll('#%s polyline.series')].map(p => [p.dataset.series, p.dataset.total]))`, id), &totals),
		}
	}
	run(t, ctx, "open the history",
		chromedp.Navigate(base+"history"),
		chromedp.WaitVisible("#history-total", chromedp.ByID),
		readChart("history-total"),
	)
	want := map[string]string{"submitted": "11", "accepted": "10", "rejected": "0", "exhausted": "1", "attempt errors": "1"}
	if fmt.Sprint(totals) != fmt.Sprint(want) {
		t.Fatalf("the hour's totals %v, want %v", totals, want)
	}
	if len(yLabels) < 3 || yLabels[0] != "0" || !slices.Contains(yLabels, "per minute") {
		t.Fatalf("y axis %q: want counts from 0 and the unit", yLabels)
	}
	clock := 0
	for _, l := range xLabels {
		if len(l) == 5 && l[2] == ':' {
			clock++
		}
	}
	if clock < 5 || !slices.Contains(xLabels, "time (UTC)") {
		t.Fatalf("x axis %q: want times of day and the unit", xLabels)
	}
	var gatewayCharts, targetCharts int
	run(t, ctx, "count the charts",
		chromedp.Evaluate(`document.querySelectorAll('#history-gateways figure.linechart').length`, &gatewayCharts),
		chromedp.Evaluate(`document.querySelectorAll('#history-targets figure.linechart').length`, &targetCharts),
	)
	if gatewayCharts != 2 || targetCharts != 4 {
		t.Fatalf("%d gateway and %d target charts, want 2 and 4", gatewayCharts, targetCharts)
	}
	screenshot(t, ctx, "console-history")

	// The day, by the quarter hour.
	run(t, ctx, "open the day",
		chromedp.Navigate(base+"history?window=day"),
		chromedp.WaitVisible("#history-total", chromedp.ByID),
		readChart("history-total"),
	)
	if !slices.Contains(yLabels, "per 15 minutes") || totals["submitted"] != "11" {
		t.Fatalf("the day: y axis %q, totals %v", yLabels, totals)
	}

	// The instances: the leader holds the lease, the API-only one does not.
	var rows []map[string]string
	run(t, ctx, "open the instances",
		chromedp.Navigate(base+"instances"),
		chromedp.WaitVisible("#instances", chromedp.ByID),
		chromedp.Evaluate(`[...document.querySelectorAll('#instances tbody tr[data-holder]')].map(tr => ({
			holder: tr.dataset.holder, role: tr.dataset.role, leader: String(tr.hasAttribute('data-leader')),
			stale: String(tr.hasAttribute('data-stale'))}))`, &rows),
	)
	if len(rows) != 2 ||
		fmt.Sprint(rows[0]) != fmt.Sprint(map[string]string{"holder": "history-api", "role": "api-only", "leader": "false", "stale": "false"}) ||
		fmt.Sprint(rows[1]) != fmt.Sprint(map[string]string{"holder": "history-leader", "role": "leader", "leader": "true", "stale": "false"}) {
		t.Fatalf("instances %v", rows)
	}
	var holder string
	run(t, ctx, "read the lease", chromedp.Text("#lease-holder", &holder, chromedp.ByID))
	if holder != "history-leader" {
		t.Fatalf("lease holder %q", holder)
	}
	screenshot(t, ctx, "console-instances")

	// Auto-refresh is off until turned on, then remembered, and brings a
	// new submission onto the chart without reloading the page.
	var on bool
	run(t, ctx, "auto-refresh is off at first",
		chromedp.Navigate(base+"history"),
		chromedp.WaitVisible("#autorefresh", chromedp.ByID),
		chromedp.Evaluate(`document.getElementById('autorefresh').checked`, &on),
	)
	if on {
		t.Fatal("auto-refresh is on before anyone turned it on")
	}
	var kept bool
	run(t, ctx, "turn auto-refresh on",
		chromedp.Click("#autorefresh", chromedp.ByID),
		chromedp.Evaluate(`window.sameDocument = true; localStorage.getItem('sm-autorefresh') === '1'`, &on),
	)
	if !on {
		t.Fatal("turning auto-refresh on was not remembered")
	}
	mustCreate(t, leader.api, "h-late", "sms.batch", `{"to":"+15550100","text":"hi"}`)
	run(t, ctx, "wait for the refresh",
		chromedp.Poll(`document.querySelector('#history-total polyline[data-series="submitted"]').dataset.total === '12'`, nil,
			chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Evaluate(`window.sameDocument === true`, &kept),
	)
	if !kept {
		t.Fatal("the refresh reloaded the page instead of swapping its charts")
	}
	run(t, ctx, "auto-refresh stays on across pages",
		chromedp.Navigate(base+"instances"),
		chromedp.WaitVisible("#autorefresh", chromedp.ByID),
		chromedp.Evaluate(`document.getElementById('autorefresh').checked`, &on),
	)
	if !on {
		t.Fatal("auto-refresh was forgotten on the next page")
	}
	// A page without lists or charts offers none.
	var hidden bool
	run(t, ctx, "a page of neither has no auto-refresh",
		chromedp.Navigate(base+"no-such-page"),
		chromedp.WaitReady("body", chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById('autorefresh-control').hidden`, &hidden),
	)
	if !hidden {
		t.Fatal("the not-found page offers auto-refresh")
	}
}

// waitInstances polls GET /v1/instances until cond holds.
func waitInstances(t *testing.T, c *client.ClientWithResponses, cond func(client.InstanceList) bool) client.InstanceList {
	t.Helper()
	deadline := time.Now().Add(terminalWait)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		res, err := c.ListInstancesWithResponse(context.Background())
		if err != nil || res.JSON200 == nil {
			t.Fatalf("listing instances: %v %s", err, res.Body)
		}
		if cond(*res.JSON200) {
			return *res.JSON200
		}
		if time.Now().After(deadline) {
			t.Fatalf("instances not as expected within %s: %s", terminalWait, res.Body)
		}
		<-tick.C
	}
}

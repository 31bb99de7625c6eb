package console_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/console"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// pastBook is a HistoryReader with a fixed hour: three targets, two
// gateways, counts in the first and the last bucket.
type pastBook struct {
	mu    sync.Mutex
	asked []ports.HistoryWindow
}

func (p *pastBook) History(_ context.Context, w ports.HistoryWindow) (ports.HistoryView, error) {
	p.mu.Lock()
	p.asked = append(p.asked, w)
	p.mu.Unlock()
	n := int(w.Span / w.Bucket)
	from := time.Date(2026, 2, 2, 11, 1, 0, 0, time.UTC)
	v := ports.HistoryView{Window: w, Now: from.Add(time.Hour), Starts: make([]time.Time, n)}
	for i := range v.Starts {
		v.Starts[i] = from.Add(time.Duration(i) * w.Bucket)
	}
	series := func(name string, first, last ports.HistoryCounts) ports.HistorySeries {
		s := ports.HistorySeries{Name: name, Counts: make([]ports.HistoryCounts, n)}
		s.Counts[0], s.Counts[n-1] = first, last
		return s
	}
	v.Total = series("", ports.HistoryCounts{Submitted: 40, Accepted: 30}, ports.HistoryCounts{Submitted: 7, AttemptErrors: 3})
	v.Targets = []ports.HistorySeries{
		series("alerts", ports.HistoryCounts{Submitted: 40, Accepted: 30}, ports.HistoryCounts{}),
		series("promo", ports.HistoryCounts{}, ports.HistoryCounts{Submitted: 7, AttemptErrors: 3}),
	}
	v.Gateways = []ports.HistorySeries{series("http://sms-a.test", v.Total.Counts[0], v.Total.Counts[n-1])}
	return v, nil
}

func (p *pastBook) last() ports.HistoryWindow {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.asked[len(p.asked)-1]
}

// consoleWith is an open console (no keys) with the given history and
// instances.
func consoleWith(t *testing.T, cfg console.Config) *browser {
	t.Helper()
	clk := clocktest.New(time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC))
	store := memstore.New(clk)
	svc := &desk{store: store, clock: clk}
	cfg.Service, cfg.Operator, cfg.Clock, cfg.Sessions, cfg.HolderID = svc, svc, clk, store, "node-a"
	ui, err := console.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(ui)
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: ts.URL, c: &http.Client{Jar: jar}}
}

var (
	svgTexts = regexp.MustCompile(`<text[^>]*>([^<]*)</text>`)
	polyline = regexp.MustCompile(`<polyline class="series" data-series="([^"]+)" data-total="(\d+)"`)
)

// chartOf returns the figure of the chart whose title is title.
func chartOf(t *testing.T, page, title string) string {
	t.Helper()
	start := strings.Index(page, `data-chart="`+title+`"`)
	if start < 0 {
		t.Fatalf("no chart %q in the page", title)
	}
	end := strings.Index(page[start:], "</figure>")
	return page[start : start+end]
}

func TestHistoryChartsHaveAxesUnitsAndSeries(t *testing.T) {
	past := &pastBook{}
	b := consoleWith(t, console.Config{History: past})
	code, _, page := b.do("GET", "/ui/history", nil)
	if code != http.StatusOK || past.last() != ports.LastHour {
		t.Fatalf("history: %d, window %+v", code, past.last())
	}
	total := chartOf(t, page, "All targets")
	var texts []string
	for _, m := range svgTexts.FindAllStringSubmatch(total, -1) {
		texts = append(texts, m[1])
	}
	joined := strings.Join(texts, "|")
	// y: 0 to 40 by 10 (counts per minute); x: every ten minutes, UTC.
	for _, want := range []string{"0|10|20|30|40|per minute", "11:10|11:20|11:30|11:40|11:50|12:00|time (UTC)"} {
		if !strings.Contains(joined, want) {
			t.Fatalf("axis labels %q lack %q", joined, want)
		}
	}
	totals := map[string]string{}
	for _, m := range polyline.FindAllStringSubmatch(total, -1) {
		totals[m[1]] = m[2]
	}
	want := map[string]string{"submitted": "47", "accepted": "30", "rejected": "0", "exhausted": "0", "attempt errors": "3"}
	if len(totals) != len(want) {
		t.Fatalf("series %v, want %v", totals, want)
	}
	for k, v := range want {
		if totals[k] != v {
			t.Fatalf("series %v, want %v", totals, want)
		}
	}
	for _, title := range []string{"http://sms-a.test", "alerts", "promo"} {
		chartOf(t, page, title)
	}
	if !strings.Contains(page, `id="history-live" data-live`) || !strings.Contains(page, `id="autorefresh"`) {
		t.Fatal("the charts are not marked for auto-refresh")
	}

	// The day is cut in quarter hours, and says so.
	_, _, page = b.do("GET", "/ui/history?window=day", nil)
	if past.last() != ports.LastDay || !strings.Contains(chartOf(t, page, "All targets"), ">per 15 minutes<") {
		t.Fatalf("the day: window %+v", past.last())
	}
	// An unknown window is the hour.
	b.do("GET", "/ui/history?window=year", nil)
	if past.last() != ports.LastHour {
		t.Fatalf("an unknown window asked %+v", past.last())
	}
}

func TestHistoryAndInstancesUnavailable(t *testing.T) {
	b := consoleWith(t, console.Config{})
	if _, _, page := b.do("GET", "/ui/history", nil); !strings.Contains(page, `id="history-unavailable"`) {
		t.Fatal("history without a reader does not say it is unavailable")
	}
	if _, _, page := b.do("GET", "/ui/instances", nil); !strings.Contains(page, `id="instances-unavailable"`) {
		t.Fatal("instances without a directory do not say they are unavailable")
	}
}

type fleetBook struct{ o ports.InstanceOverview }

func (f fleetBook) Instances(context.Context) (ports.InstanceOverview, error) { return f.o, nil }

func TestInstancesShowTheLeaderAndTheStale(t *testing.T) {
	seen := time.Date(2026, 2, 2, 11, 59, 58, 0, time.UTC)
	b := consoleWith(t, console.Config{Instances: fleetBook{ports.InstanceOverview{
		Instances: []ports.InstanceStatus{
			{InstanceState: ports.InstanceState{HolderID: "node-a", Version: "v1", Role: ports.RoleFollower, Interval: 10 * time.Second,
				StartedAt: seen, LastSeenAt: seen, SeenAgo: 2 * time.Second}, StaleAfter: 30 * time.Second},
			{InstanceState: ports.InstanceState{HolderID: "node-b", Version: "v1", Role: ports.RoleLeader, Interval: 10 * time.Second,
				StartedAt: seen, LastSeenAt: seen, SeenAgo: time.Second, HoldsLease: true}, StaleAfter: 30 * time.Second},
			{InstanceState: ports.InstanceState{HolderID: "node-c", Role: ports.RoleAPIOnly, Interval: 10 * time.Second,
				StartedAt: seen, LastSeenAt: seen.Add(-time.Minute), SeenAgo: 61 * time.Second}, StaleAfter: 30 * time.Second, Stale: true},
		},
		Lease: core.Lease{HolderID: "node-b", Epoch: 4, ExpiresAt: seen.Add(time.Minute)}, LeaseFound: true,
	}}})
	_, _, page := b.do("GET", "/ui/instances", nil)
	row := func(holder string) string {
		i := strings.Index(page, `<tr data-holder="`+holder+`"`)
		if i < 0 {
			t.Fatalf("no row for %s", holder)
		}
		return page[i : i+strings.Index(page[i:], "</tr>")]
	}
	if r := row("node-b"); !strings.Contains(r, "data-leader") || !strings.Contains(r, "holds the lease") || strings.Contains(r, "data-stale") {
		t.Fatalf("the leader's row: %s", r)
	}
	if r := row("node-a"); strings.Contains(r, "data-leader") || !strings.Contains(r, "this instance") || !strings.Contains(r, ">live<") {
		t.Fatalf("this instance's row: %s", r)
	}
	if r := row("node-c"); !strings.Contains(r, "data-stale") || !strings.Contains(r, "not seen for over 30s") || !strings.Contains(r, "api-only") {
		t.Fatalf("the stale row: %s", r)
	}
	if !strings.Contains(page, `<dd id="lease-holder">node-b</dd>`) || !strings.Contains(page, "1 stale") {
		t.Fatal("the lease holder or the stale count is missing")
	}
}

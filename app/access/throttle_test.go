package access

import (
	"bytes"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/ports"
)

// countingMetrics records the throttle's metric events.
type countingMetrics struct {
	mu                sync.Mutex
	failed, throttled map[string]int
}

func (m *countingMetrics) AuthFailed(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failed[s]++
}

func (m *countingMetrics) AuthThrottled(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.throttled[s]++
}

func newThrottle(t *testing.T, proxies ...string) (*Throttle, *clocktest.Clock, *countingMetrics, *bytes.Buffer) {
	t.Helper()
	clk := clocktest.New(time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC))
	m := &countingMetrics{failed: map[string]int{}, throttled: map[string]int{}}
	var logs bytes.Buffer
	var trusted []netip.Prefix
	for _, p := range proxies {
		trusted = append(trusted, netip.MustParsePrefix(p))
	}
	th, err := New(Config{Policy: core.AuthThrottlePolicy{Burst: 3, Interval: 10 * time.Second},
		TrustedProxies: trusted, Clock: clk, Metrics: m,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	return th, clk, m, &logs
}

// TestThrottleAcrossSurfaces: unknown keys on the API and on the console
// count against one address; once it is throttled both refuse it, with a
// log event and the metrics, until the interval passes.
func TestThrottleAcrossSurfaces(t *testing.T) {
	th, clk, m, logs := newThrottle(t)
	api := ports.AuthClient{Surface: ports.SurfaceAPI, Peer: "192.0.2.7:40000"}
	ui := ports.AuthClient{Surface: ports.SurfaceConsole, Peer: "192.0.2.7:40001"}
	other := ports.AuthClient{Surface: ports.SurfaceAPI, Peer: "192.0.2.8:40000"}
	th.Failed(api)
	th.Failed(ui)
	if wait := th.Admit(api); wait != 0 {
		t.Fatalf("refused within the burst: %v", wait)
	}
	if wait := th.Failed(api); wait != 10*time.Second {
		t.Fatalf("third failure: wait %v, want 10s", wait)
	}
	if th.Admit(ui) == 0 || th.Admit(api) == 0 {
		t.Fatal("a throttled address was admitted")
	}
	if wait := th.Admit(other); wait != 0 {
		t.Fatalf("another address refused: %v", wait)
	}
	if m.failed["api"] != 2 || m.failed["console"] != 1 || m.throttled["api"] != 1 || m.throttled["console"] != 1 {
		t.Fatalf("metrics: failed %v, throttled %v", m.failed, m.throttled)
	}
	if n := strings.Count(logs.String(), "msg=auth_throttled"); n != 1 || !strings.Contains(logs.String(), "client=192.0.2.7") {
		t.Fatalf("want one auth_throttled event naming the client, got %d in:\n%s", n, logs)
	}
	clk.Advance(10 * time.Second)
	if wait := th.Admit(api); wait != 0 {
		t.Fatalf("refused after the interval: %v", wait)
	}
}

// TestClientAddress: only a trusted proxy's X-Forwarded-For names the
// client, the rightmost untrusted hop; IPv6 clients count by /64.
func TestClientAddress(t *testing.T) {
	th, _, _, _ := newThrottle(t, "10.0.0.0/8", "fd00::/8")
	for _, c := range []struct {
		peer string
		xff  []string
		want string
	}{
		{"192.0.2.7:1", nil, "192.0.2.7"},
		{"192.0.2.7:1", []string{"198.51.100.1"}, "192.0.2.7"},                            // an untrusted peer's claim
		{"10.0.0.5:1", []string{"198.51.100.1"}, "198.51.100.1"},                          // HAProxy's word
		{"10.0.0.5:1", []string{"203.0.113.9, 198.51.100.1"}, "198.51.100.1"},             // the client's own claim ignored
		{"10.0.0.5:1", []string{"203.0.113.9", "198.51.100.1, 10.0.0.6"}, "198.51.100.1"}, // two proxies
		{"10.0.0.5:1", []string{"10.0.0.7"}, "10.0.0.7"},                                  // all trusted: the leftmost
		{"10.0.0.5:1", []string{"garbage, 10.0.0.6"}, "10.0.0.6"},
		{"10.0.0.5:1", nil, "10.0.0.5"},
		{"[2001:db8:1:2:3::4]:1", nil, "2001:db8:1:2::/64"},
		{"[fd00::1]:1", []string{"2001:db8:1:2:ffff::9"}, "2001:db8:1:2::/64"},
		{"[::ffff:192.0.2.7]:1", nil, "192.0.2.7"},
		{"@", nil, "@"},
	} {
		if got := th.clientOf(ports.AuthClient{Peer: c.peer, ForwardedFor: c.xff}); got != c.want {
			t.Errorf("peer %s, X-Forwarded-For %q: client %q, want %q", c.peer, c.xff, got, c.want)
		}
	}
}

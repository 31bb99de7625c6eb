package gateway_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/gateway"
	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// traceHop stands in front of the gateway simulator, as a proxy would, and
// records the traceparent lines of every request it passes on.
type traceHop struct {
	mu   sync.Mutex
	seen map[string][]string // "METHOD path" -> traceparent lines
}

func startTraceHop(t *testing.T, sim *gatewaysim.Simulator, gt core.GatewayType) (*traceHop, string) {
	t.Helper()
	target, err := url.Parse(sim.URL(gt))
	if err != nil {
		t.Fatal(err)
	}
	hop := &traceHop{seen: map[string][]string{}}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hop.mu.Lock()
		hop.seen[r.Method+" "+r.URL.Path] = append(hop.seen[r.Method+" "+r.URL.Path], r.Header.Values("Traceparent")...)
		hop.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return hop, srv.URL
}

func (h *traceHop) lines(key string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.seen[key])
}

const sentTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestTraceParentReachesTheGateway: a submission and a lookup carry the
// intent's traceparent to the gateway, once and as given, and a call
// without one carries none.
func TestTraceParentReachesTheGateway(t *testing.T) {
	sim := startSim(t, gatewaysim.Config{})
	hop, base := startTraceHop(t, sim, core.GatewaySMS)
	c := newClient(t, core.GatewaySMS, gateway.Config{})

	traced := params(core.GatewaySMS, base, "traced", `{}`)
	traced.TraceParent = sentTrace
	if o, err := c.Submit(t.Context(), traced); err != nil || o.Status != core.OutcomeAccepted {
		t.Fatalf("Submit = %+v, %v", o, err)
	}
	if got := hop.lines("POST /v1/submissions"); !slices.Equal(got, []string{sentTrace}) {
		t.Errorf("the gateway received traceparent %q, want exactly %q", got, sentTrace)
	}
	if n := sim.Reference("traced").Submissions; n != 1 {
		t.Errorf("the simulator saw %d submissions of the traced reference, want 1", n)
	}

	if _, err := c.Submit(t.Context(), params(core.GatewaySMS, base, "untraced", `{}`)); err != nil {
		t.Fatal(err)
	}
	if got := hop.lines("POST /v1/submissions"); len(got) != 1 {
		t.Errorf("a submission without a trace context sent traceparent lines %q", got[1:])
	}

	res, err := c.Lookup(t.Context(), ports.LookupParams{GatewayType: core.GatewaySMS, GatewayURL: base,
		Reference: "traced", TraceParent: sentTrace})
	if err != nil || res.Answer != core.LookupKnown {
		t.Fatalf("Lookup = %+v, %v", res, err)
	}
	if got := hop.lines("GET /v1/submissions/traced"); !slices.Equal(got, []string{sentTrace}) {
		t.Errorf("the lookup carried traceparent %q, want exactly %q", got, sentTrace)
	}
}

// TestMalformedTraceParentIsNotSent: a value that is not a version-00
// traceparent (it could only come from a caller's bug) never reaches the
// gateway's headers, and the call goes out without it.
func TestMalformedTraceParentIsNotSent(t *testing.T) {
	sim := startSim(t, gatewaysim.Config{})
	hop, base := startTraceHop(t, sim, core.GatewaySMS)
	c := newClient(t, core.GatewaySMS, gateway.Config{})
	for i, tp := range []string{
		"not a traceparent",
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", // valid, but not the form kept
		sentTrace + "\r\nX-Injected: 1",
	} {
		p := params(core.GatewaySMS, base, "malformed-"+string(rune('a'+i)), `{}`)
		p.TraceParent = tp
		if o, err := c.Submit(t.Context(), p); err != nil || o.Status != core.OutcomeAccepted {
			t.Fatalf("Submit with traceparent %q = %+v, %v", tp, o, err)
		}
	}
	if got := hop.lines("POST /v1/submissions"); len(got) != 0 {
		t.Errorf("malformed trace contexts reached the gateway: %q", got)
	}
}

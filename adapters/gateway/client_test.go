package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gateway"
	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

func startSim(t *testing.T, cfg gatewaysim.Config) *gatewaysim.Simulator {
	t.Helper()
	sim, err := gatewaysim.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	return sim
}

func newClient(t *testing.T, gt core.GatewayType, cfg gateway.Config) *gateway.Client {
	t.Helper()
	c, err := gateway.New(gt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func params(gt core.GatewayType, url, ref, payload string) ports.SubmitParams {
	return ports.SubmitParams{GatewayType: gt, GatewayURL: url, Reference: ref, Payload: json.RawMessage(payload)}
}

// wantError checks an attempt error's kind, sentinel and message.
func wantError(t *testing.T, err error, kind gateway.Kind, sentinel error, message string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want a %s error, got none", kind)
	}
	if got := gateway.KindOf(err); got != kind {
		t.Fatalf("kind = %q, want %q (error %q)", got, kind, err)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("errors.Is(%q, %v) is false", err, sentinel)
	}
	if strings.HasSuffix(message, "*") {
		if !strings.HasPrefix(err.Error(), strings.TrimSuffix(message, "*")) {
			t.Fatalf("error %q, want it to start with %q", err, strings.TrimSuffix(message, "*"))
		}
	} else if err.Error() != message {
		t.Fatalf("error %q, want %q", err, message)
	}
}

func TestOutcomesForBothGatewayTypes(t *testing.T) {
	sim := startSim(t, gatewaysim.Config{})
	for _, gt := range core.GatewayTypes() {
		c := newClient(t, gt, gateway.Config{})
		type step struct {
			step gatewaysim.Step
			want core.Outcome
		}
		cases := []step{{gatewaysim.StepAccepted, core.Outcome{Status: core.OutcomeAccepted}}}
		for _, reason := range append(gt.RejectionReasons(), "not_in_the_taxonomy") {
			cases = append(cases, step{gatewaysim.Rejected(reason), core.Outcome{Status: core.OutcomeRejected, Reason: reason}})
		}
		for _, tc := range cases {
			t.Run(string(gt)+"/"+string(tc.step), func(t *testing.T) {
				ref := t.Name()
				if err := sim.Script(ref, tc.step); err != nil {
					t.Fatal(err)
				}
				got, err := c.Submit(t.Context(), params(gt, sim.URL(gt), ref, `{}`))
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != tc.want.Status || got.Reason != tc.want.Reason {
					t.Fatalf("outcome %+v, want %+v", got, tc.want)
				}
				if (got.MessageID != "") != (got.Status == core.OutcomeAccepted) {
					t.Fatalf("messageId %q: the simulator sends one with acceptances only", got.MessageID)
				}
			})
		}
	}
}

func TestInvalidAnswersForBothGatewayTypes(t *testing.T) {
	const timeout = 100 * time.Millisecond
	cases := []struct {
		mode     gatewaysim.Mode
		kind     gateway.Kind
		sentinel error
		message  string // a trailing * matches a prefix
	}{
		{gatewaysim.HTTPStatusMode(503), gateway.KindHTTPStatus, gateway.ErrHTTPStatus, `gateway answered HTTP 503: {"error":"simulated HTTP 503"}`},
		{gatewaysim.HTTPStatusMode(404), gateway.KindHTTPStatus, gateway.ErrHTTPStatus, `gateway answered HTTP 404: {"error":"simulated HTTP 404"}`},
		{gatewaysim.ModeNotJSON, gateway.KindNotJSON, gateway.ErrInvalidAnswer, "gateway answer is not JSON: invalid character '<' looking for beginning of value"},
		{gatewaysim.ModeEmptyBody, gateway.KindNotJSON, gateway.ErrInvalidAnswer, "gateway answer is not JSON: unexpected end of JSON input"},
		{gatewaysim.ModeNotObject, gateway.KindNotObject, gateway.ErrInvalidAnswer, `gateway answer is not a JSON object: ["accepted"]`},
		{gatewaysim.ModeNoStatus, gateway.KindNoStatus, gateway.ErrInvalidAnswer, "gateway answer has no status"},
		{gatewaysim.ModeUnknownStatus, gateway.KindUnknownStatus, gateway.ErrInvalidAnswer, `gateway answer has unknown status "queued"`},
		{gatewaysim.ModeNoReason, gateway.KindNoReason, gateway.ErrInvalidAnswer, "gateway answer rejected without a reason"},
		{gatewaysim.ModeReasonNotString, gateway.KindBadField, gateway.ErrInvalidAnswer, `gateway answer field "reason" is not a string`},
		{gatewaysim.ModeOversized, gateway.KindTooLarge, gateway.ErrInvalidAnswer, "gateway answer exceeds 65536 bytes"},
		{gatewaysim.ModeDrop, gateway.KindTransport, gateway.ErrTransport, "gateway call failed: Post *"},
		{gatewaysim.ModeAcceptThenDrop, gateway.KindTransport, gateway.ErrTransport, "gateway call failed: Post *"},
		{gatewaysim.ModeHang, gateway.KindTimeout, gateway.ErrTimeout, "gateway call timed out after 100ms"},
		{gatewaysim.ModeAcceptThenHang, gateway.KindTimeout, gateway.ErrTimeout, "gateway call timed out after 100ms"},
	}
	sim := startSim(t, gatewaysim.Config{})
	for _, gt := range core.GatewayTypes() {
		// Only the hanging cases get the short timeout, so a loaded machine
		// cannot turn a slow but real answer into a timeout.
		short := newClient(t, gt, gateway.Config{Timeout: timeout})
		normal := newClient(t, gt, gateway.Config{})
		for _, tc := range cases {
			c := normal
			if tc.kind == gateway.KindTimeout {
				c = short
			}
			t.Run(string(gt)+"/"+string(tc.mode), func(t *testing.T) {
				ref := t.Name()
				if err := sim.Script(ref, gatewaysim.Fault(tc.mode)); err != nil {
					t.Fatal(err)
				}
				began := time.Now()
				got, err := c.Submit(t.Context(), params(gt, sim.URL(gt), ref, `{}`))
				wantError(t, err, tc.kind, tc.sentinel, tc.message)
				if got != (core.Outcome{}) {
					t.Fatalf("an error came with outcome %+v", got)
				}
				var gwErr *gateway.Error
				if !errors.As(err, &gwErr) || gwErr.GatewayType != gt {
					t.Fatalf("error %#v does not name gateway type %s", err, gt)
				}
				if tc.kind == gateway.KindTimeout {
					if took := time.Since(began); took < timeout {
						t.Fatalf("timed out after %v, before the %v timeout", took, timeout)
					}
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("a timeout must match context.DeadlineExceeded: %v", err)
					}
				}
				// A timed-out call may, on a loaded machine, not have reached
				// the gateway yet; any other call reached it exactly once.
				if n := sim.Reference(ref).Submissions; n > 1 || (n == 0 && tc.kind != gateway.KindTimeout) {
					t.Fatalf("the gateway saw %d submissions for one call: want 1, the client must never retry", n)
				}
			})
		}
	}
}

// TestAnswerEdgeCases reads answers the simulator has no mode for, from a
// real HTTP server that answers a fixed body.
func TestAnswerEdgeCases(t *testing.T) {
	cases := []struct {
		body    string
		want    core.Outcome
		kind    gateway.Kind
		message string
	}{
		{body: `{"status":"accepted","reason":"ignored","messageId":"m-1"}`, want: core.Outcome{Status: core.OutcomeAccepted, MessageID: "m-1"}},
		{body: ` {"status":"rejected","reason":"invalid_message"} `, want: core.Outcome{Status: core.OutcomeRejected, Reason: "invalid_message"}},
		{body: `{"status":"rejected","reason":""}`, kind: gateway.KindNoReason, message: "gateway answer rejected without a reason"},
		{body: `{"status":"rejected","reason":null}`, kind: gateway.KindNoReason, message: "gateway answer rejected without a reason"},
		{body: `{"status":null}`, kind: gateway.KindNoStatus, message: "gateway answer has no status"},
		{body: `{"status":"Accepted"}`, kind: gateway.KindUnknownStatus, message: `gateway answer has unknown status "Accepted"`},
		{body: `{"status":42}`, kind: gateway.KindBadField, message: `gateway answer field "status" is not a string`},
		{body: `{"status":"accepted","messageId":7}`, kind: gateway.KindBadField, message: `gateway answer field "messageId" is not a string`},
		{body: `null`, kind: gateway.KindNotObject, message: "gateway answer is not a JSON object: null"},
		{body: `"accepted"`, kind: gateway.KindNotObject, message: `gateway answer is not a JSON object: "accepted"`},
		{body: `{"status":"rejected","reason":"invalid_message","status":"accepted"}`, kind: gateway.KindDuplicateField, message: `gateway answer gives "status" more than once`},
		{body: `{"status":"rejected","reason":"invalid_message","Status":"accepted"}`, kind: gateway.KindDuplicateField, message: `gateway answer gives "status" more than once`},
		{body: `{"status":"rejected","reason":"a","reason":"b"}`, kind: gateway.KindDuplicateField, message: `gateway answer gives "reason" more than once`},
		{body: `{"status":"accepted","messageId":"m","messageid":"n"}`, kind: gateway.KindDuplicateField, message: `gateway answer gives "messageId" more than once`},
		{body: `{"status":"accepted","extra":1,"extra":2}`, want: core.Outcome{Status: core.OutcomeAccepted}},
		{body: `{"status":"accepted","nested":{"status":"rejected"}}`, want: core.Outcome{Status: core.OutcomeAccepted}},
		{body: `{"status":"accepted"} {}`, kind: gateway.KindNotJSON, message: "gateway answer is not JSON: invalid character '{' after top-level value"},
	}
	for _, tc := range cases {
		t.Run(tc.body, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c := newClient(t, core.GatewaySMS, gateway.Config{})
			got, err := c.Submit(t.Context(), params(core.GatewaySMS, srv.URL, "r", `{}`))
			if tc.kind == "" {
				if err != nil || got != tc.want {
					t.Fatalf("Submit = %+v, %v; want %+v", got, err, tc.want)
				}
				return
			}
			wantError(t, err, tc.kind, gateway.ErrInvalidAnswer, tc.message)
		})
	}
}

// TestAnswerHeadersAreBounded checks that a gateway cannot make the client
// buffer megabytes of headers: over the limit the call fails as a
// transport error.
func TestAnswerHeadersAreBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Padding", strings.Repeat("p", 80<<10))
		_, _ = io.WriteString(w, `{"status":"accepted"}`)
	}))
	defer srv.Close()
	c := newClient(t, core.GatewaySMS, gateway.Config{})
	_, err := c.Submit(t.Context(), params(core.GatewaySMS, srv.URL, "r", `{}`))
	wantError(t, err, gateway.KindTransport, gateway.ErrTransport, "gateway call failed: *")
	if !strings.Contains(err.Error(), "exceeded") {
		t.Fatalf("error %q does not say the headers were too large", err)
	}
	roomy := newClient(t, core.GatewaySMS, gateway.Config{MaxAnswerHeaderBytes: 1 << 20})
	if got, err := roomy.Submit(t.Context(), params(core.GatewaySMS, srv.URL, "r", `{}`)); err != nil || got.Status != core.OutcomeAccepted {
		t.Fatalf("with a 1 MiB header limit: %+v, %v", got, err)
	}
}

func TestRequestOnTheWire(t *testing.T) {
	var got struct {
		method, path, contentType string
		body                      []byte
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path, got.contentType = r.Method, r.URL.Path, r.Header.Get("Content-Type")
		got.body, _ = io.ReadAll(r.Body)
		_, _ = io.WriteString(w, `{"status":"accepted"}`)
	}))
	defer srv.Close()
	c := newClient(t, core.GatewayPush, gateway.Config{})
	payload := `{"token":"<abc>&","n":1.50}`
	if _, err := c.Submit(t.Context(), params(core.GatewayPush, srv.URL, `order-"1"<2>`, payload)); err != nil {
		t.Fatal(err)
	}
	wantBody := `{"reference":"order-\"1\"<2>","payload":` + payload + `}`
	if got.method != http.MethodPost || got.path != "/v1/submissions" || got.contentType != "application/json" || string(got.body) != wantBody {
		t.Fatalf("request = %s %s (%s) %s\nwant POST /v1/submissions (application/json) %s", got.method, got.path, got.contentType, got.body, wantBody)
	}
}

// TestEachGatewayURLKeepsItsOwnSubmitURL checks that one client, resolving
// each gateway URL's submit URL once, still sends every attempt to the URL
// its own contract names, including the User-Agent and Accept headers.
func TestEachGatewayURLKeepsItsOwnSubmitURL(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path+" "+r.Header.Get("Accept")+" "+r.Header.Get("User-Agent"))
		mu.Unlock()
		_, _ = io.WriteString(w, `{"status":"accepted"}`)
	}))
	defer srv.Close()
	c := newClient(t, core.GatewaySMS, gateway.Config{UserAgent: "sm-test"})
	bases := []string{srv.URL + "/a", srv.URL + "/b/", srv.URL}
	var want []string
	for round := range 2 {
		for i, base := range bases {
			ref := fmt.Sprintf("r%d-%d", round, i)
			if _, err := c.Submit(t.Context(), params(core.GatewaySMS, base, ref, `{}`)); err != nil {
				t.Fatal(err)
			}
		}
		want = append(want, "/a/v1/submissions application/json sm-test", "/b/v1/submissions application/json sm-test",
			"/v1/submissions application/json sm-test")
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(paths, want) {
		t.Fatalf("requests went to %q, want %q", paths, want)
	}
}

func TestGatewayURLWithAPathPrefix(t *testing.T) {
	sim := startSim(t, gatewaysim.Config{})
	target, err := url.Parse(sim.URL(core.GatewaySMS))
	if err != nil {
		t.Fatal(err)
	}
	// An HAProxy-like frontend that routes /sms-frontend/ to the gateway.
	frontend := httptest.NewServer(http.StripPrefix("/sms-frontend", httputil.NewSingleHostReverseProxy(target)))
	defer frontend.Close()
	c := newClient(t, core.GatewaySMS, gateway.Config{})
	for i, base := range []string{frontend.URL + "/sms-frontend", frontend.URL + "/sms-frontend/"} {
		ref := "prefixed-" + string(rune('a'+i))
		if o, err := c.Submit(t.Context(), params(core.GatewaySMS, base, ref, `{}`)); err != nil || o.Status != core.OutcomeAccepted {
			t.Fatalf("Submit via %s = %+v, %v", base, o, err)
		}
		if n := sim.Reference(ref).Submissions; n != 1 {
			t.Fatalf("the gateway behind %s saw %d submissions", base, n)
		}
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	var followed atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed.Store(true) }))
	defer target.Close()
	srv := httptest.NewServer(http.RedirectHandler(target.URL+"/v1/submissions", http.StatusTemporaryRedirect))
	defer srv.Close()
	c := newClient(t, core.GatewaySMS, gateway.Config{})
	_, err := c.Submit(t.Context(), params(core.GatewaySMS, srv.URL, "r", `{}`))
	wantError(t, err, gateway.KindHTTPStatus, gateway.ErrHTTPStatus, "gateway answered HTTP 307*")
	if followed.Load() {
		t.Fatal("the client resubmitted the attempt to the redirect target")
	}
}

func TestCallerContext(t *testing.T) {
	sim := startSim(t, gatewaysim.Config{Mode: gatewaysim.ModeHang})
	c := newClient(t, core.GatewaySMS, gateway.Config{Timeout: time.Minute})
	p := params(core.GatewaySMS, sim.URL(core.GatewaySMS), "ctx", `{}`)

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Submit(ctx, p)
	wantError(t, err, gateway.KindTimeout, gateway.ErrTimeout, "gateway call timed out: the caller's deadline passed")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want context.DeadlineExceeded in the chain: %v", err)
	}

	canceled, cancelNow := context.WithCancel(t.Context())
	cancelNow()
	_, err = c.Submit(canceled, p)
	wantError(t, err, gateway.KindCanceled, gateway.ErrCanceled, "gateway call canceled before an answer: context canceled")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled in the chain: %v", err)
	}
}

func TestNotSent(t *testing.T) {
	sim := startSim(t, gatewaysim.Config{})
	c := newClient(t, core.GatewaySMS, gateway.Config{})
	good := params(core.GatewaySMS, sim.URL(core.GatewaySMS), "not-sent", `{}`)
	cases := map[string]struct {
		edit    func(*ports.SubmitParams)
		message string
	}{
		"other gateway type": {func(p *ports.SubmitParams) { p.GatewayType = core.GatewayPush },
			`gateway call not sent: a sms client cannot submit to gateway type "push"`},
		"relative URL": {func(p *ports.SubmitParams) { p.GatewayURL = "localhost:8080" },
			`gateway call not sent: gatewayUrl "localhost:8080" is not an absolute http(s) URL`},
		"other scheme": {func(p *ports.SubmitParams) { p.GatewayURL = "ftp://127.0.0.1" },
			`gateway call not sent: gatewayUrl "ftp://127.0.0.1" is not an absolute http(s) URL`},
		"query": {func(p *ports.SubmitParams) { p.GatewayURL = sim.URL(core.GatewaySMS) + "?x=1" },
			"gateway call not sent: gatewayUrl * must not carry a query or fragment"},
		"empty reference": {func(p *ports.SubmitParams) { p.Reference = "" },
			"gateway call not sent: the reference (intentId) is empty"},
		"payload not JSON": {func(p *ports.SubmitParams) { p.Payload = json.RawMessage(`{"a":`) },
			"gateway call not sent: the payload is not valid JSON"},
		"no payload": {func(p *ports.SubmitParams) { p.Payload = nil },
			"gateway call not sent: the payload is not valid JSON"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := good
			tc.edit(&p)
			_, err := c.Submit(t.Context(), p)
			if strings.Contains(tc.message, " * ") {
				before, after, _ := strings.Cut(tc.message, " * ")
				wantError(t, err, gateway.KindNotSent, gateway.ErrNotSent, before+"*")
				if !strings.HasSuffix(err.Error(), after) {
					t.Fatalf("error %q, want it to end with %q", err, after)
				}
			} else {
				wantError(t, err, gateway.KindNotSent, gateway.ErrNotSent, tc.message)
			}
		})
	}
	if n := sim.Stats().Total; n != 0 {
		t.Fatalf("the gateway saw %d submissions of calls that must not be sent", n)
	}
}

func TestConnectionsAreBoundedAndReused(t *testing.T) {
	const maxConns = 2
	sim := startSim(t, gatewaysim.Config{Latency: 5 * time.Millisecond})
	target, err := url.Parse(sim.URL(core.GatewayPush))
	if err != nil {
		t.Fatal(err)
	}
	// A frontend in front of the gateway counts the connections the client
	// opens to it.
	var opened, active, peak atomic.Int64
	frontend := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(target))
	frontend.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			opened.Add(1)
			if n := active.Add(1); n > peak.Load() {
				peak.Store(n)
			}
		case http.StateClosed, http.StateHijacked:
			active.Add(-1)
		}
	}
	frontend.Start()
	defer frontend.Close()

	c := newClient(t, core.GatewayPush, gateway.Config{MaxConnsPerHost: maxConns})
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			o, err := c.Submit(t.Context(), params(core.GatewayPush, frontend.URL, "bounded-"+string(rune('A'+i)), `{}`))
			if err == nil && o.Status != core.OutcomeAccepted {
				err = errors.New("not accepted")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if opened.Load() > maxConns {
		t.Fatalf("the client opened %d connections for %d submissions, bound is %d", opened.Load(), n, maxConns)
	}
	if sim.StatsOf(core.GatewayPush).Accepted != n {
		t.Fatalf("the gateway accepted %d of %d", sim.StatsOf(core.GatewayPush).Accepted, n)
	}
}

func TestNewRefusesUnknownTypesAndBadConfig(t *testing.T) {
	if _, err := gateway.New("fax", gateway.Config{}); err == nil {
		t.Fatal("New accepted an unknown gateway type")
	}
	if _, err := gateway.New(core.GatewaySMS, gateway.Config{Timeout: -time.Second}); err == nil {
		t.Fatal("New accepted a negative timeout")
	}
	if _, err := gateway.New(core.GatewayPush, gateway.Config{MaxConnsPerHost: -1}); err == nil {
		t.Fatal("New accepted a negative connection bound")
	}
}

package gatewaysim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/gatewayapi"
	"github.com/submissionmanager/submission-manager/core"
)

// start runs a simulator for one test and closes it afterwards.
func start(t *testing.T, cfg gatewaysim.Config) *gatewaysim.Simulator {
	t.Helper()
	sim, err := gatewaysim.Start(cfg)
	if err != nil {
		t.Fatalf("start simulator: %v", err)
	}
	t.Cleanup(func() {
		if err := sim.Close(); err != nil {
			t.Errorf("close simulator: %v", err)
		}
	})
	return sim
}

// reply is one raw HTTP answer of the simulator.
type reply struct {
	code int
	body []byte
	err  error
}

// httpClient is a plain client with its own pool, closed after each test so
// that leak checks see no idle connection goroutines.
func httpClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func submit(ctx context.Context, c *http.Client, baseURL, ref string, payload string) reply {
	body := `{"reference":` + quote(ref) + `,"payload":` + payload + `}`
	return post(ctx, c, baseURL+"/v1/submissions", body)
}

func post(ctx context.Context, c *http.Client, url, body string) reply {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return reply{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{code: resp.StatusCode, body: b, err: err}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// answerOf decodes a 200 answer into an outcome.
func answerOf(t *testing.T, r reply) core.Outcome {
	t.Helper()
	if r.err != nil || r.code != http.StatusOK {
		t.Fatalf("want a 200 answer, got code %d, err %v, body %s", r.code, r.err, r.body)
	}
	var o core.Outcome
	if err := json.Unmarshal(r.body, &o); err != nil {
		t.Fatalf("answer %s is not an outcome: %v", r.body, err)
	}
	return o
}

func TestAcceptsOnceThenAnswersDuplicateReference(t *testing.T) {
	sim := start(t, gatewaysim.Config{})
	c := httpClient(t)
	for _, gt := range core.GatewayTypes() {
		t.Run(string(gt), func(t *testing.T) {
			ref := "dup-" + string(gt)
			first := answerOf(t, submit(t.Context(), c, sim.URL(gt), ref, `{"n":1}`))
			if first.Status != core.OutcomeAccepted || !strings.HasPrefix(first.MessageID, "sim-"+string(gt)+"-") {
				t.Fatalf("first answer = %+v, want accepted with a sim-%s- messageId", first, gt)
			}
			second := answerOf(t, submit(t.Context(), c, sim.URL(gt), ref, `{"n":1}`))
			want := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonDuplicateReference}
			if second != want {
				t.Fatalf("repeat answer = %+v, want %+v", second, want)
			}
			got := sim.StatsOf(gt).References[ref]
			if got.Submissions != 2 || got.Accepted != 1 || got.Rejected != 1 || got.Duplicates != 1 || got.Faults != 0 {
				t.Fatalf("reference stats = %+v, want 2 submissions, 1 accepted, 1 duplicate", got)
			}
		})
	}
}

func TestGatewayTypesHaveSeparateMemories(t *testing.T) {
	sim := start(t, gatewaysim.Config{})
	c := httpClient(t)
	if sim.URL(core.GatewaySMS) == sim.URL(core.GatewayPush) {
		t.Fatalf("both gateway types share %s", sim.URL(core.GatewaySMS))
	}
	for _, gt := range core.GatewayTypes() {
		if o := answerOf(t, submit(t.Context(), c, sim.URL(gt), "same-ref", `1`)); o.Status != core.OutcomeAccepted {
			t.Fatalf("%s answered %+v, want accepted: gateways must not share accepted references", gt, o)
		}
	}
	if got := sim.Stats(); got.Total != 2 || got.Accepted != 2 || got.References["same-ref"].Submissions != 2 {
		t.Fatalf("merged stats = %+v, want 2 submissions and 2 acceptances", got)
	}
}

func TestScriptedStepsThenConfiguredBehaviour(t *testing.T) {
	sim := start(t, gatewaysim.Config{})
	c := httpClient(t)
	if err := sim.Script("scripted", "provider_failure", "carrier_on_fire", gatewaysim.StepAccepted); err != nil {
		t.Fatal(err)
	}
	want := []core.Outcome{
		{Status: core.OutcomeRejected, Reason: "provider_failure"},
		{Status: core.OutcomeRejected, Reason: "carrier_on_fire"},
		{Status: core.OutcomeAccepted},
		{Status: core.OutcomeRejected, Reason: core.ReasonDuplicateReference},
	}
	for i, w := range want {
		got := answerOf(t, submit(t.Context(), c, sim.URL(core.GatewayPush), "scripted", `{}`))
		got.MessageID = ""
		if got != w {
			t.Fatalf("submission %d answered %+v, want %+v", i+1, got, w)
		}
	}
	if err := sim.Script("bad", gatewaysim.Fault("sleepy")); err == nil {
		t.Fatal("a script with an unknown mode was accepted")
	}
}

func TestScriptedAcceptanceOfAnAcceptedReferenceIsADuplicate(t *testing.T) {
	sim := start(t, gatewaysim.Config{})
	c := httpClient(t)
	if err := sim.Script("twice", "accepted", "accepted", "invalid_message"); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"", core.ReasonDuplicateReference, core.ReasonDuplicateReference} {
		if got := answerOf(t, submit(t.Context(), c, sim.URL(core.GatewaySMS), "twice", `{}`)); got.Reason != want {
			t.Fatalf("submission %d answered %+v, want reason %q", i+1, got, want)
		}
	}
}

func TestFaultModes(t *testing.T) {
	sim := start(t, gatewaysim.Config{})
	c := httpClient(t)
	// check inspects the raw reply of one fault.
	cases := map[gatewaysim.Mode]func(r reply) error{
		gatewaysim.ModeDrop:           wantTransportError,
		gatewaysim.ModeAcceptThenDrop: wantTransportError,
		gatewaysim.ModeHang:           wantTransportError,
		gatewaysim.ModeAcceptThenHang: wantTransportError,
		gatewaysim.ModeNotJSON:        want200(func(b []byte) bool { return !json.Valid(b) && len(b) > 0 }),
		gatewaysim.ModeEmptyBody:      want200(func(b []byte) bool { return len(b) == 0 }),
		gatewaysim.ModeNotObject:      want200(func(b []byte) bool { return string(b) == `["accepted"]` }),
		gatewaysim.ModeNoStatus:       want200(func(b []byte) bool { return json.Valid(b) && !bytes.Contains(b, []byte(`"status"`)) }),
		gatewaysim.ModeUnknownStatus:  want200(func(b []byte) bool { return string(b) == `{"status":"queued"}` }),
		gatewaysim.ModeNoReason:       want200(func(b []byte) bool { return string(b) == `{"status":"rejected"}` }),
		gatewaysim.ModeReasonNotString: want200(func(b []byte) bool {
			return string(b) == `{"status":"rejected","reason":42}`
		}),
		gatewaysim.ModeOversized: want200(func(b []byte) bool { return json.Valid(b) && len(b) > 1<<20 }),
		gatewaysim.HTTPStatusMode(503): func(r reply) error {
			if r.err != nil || r.code != http.StatusServiceUnavailable {
				return fmt.Errorf("want HTTP 503, got %d (err %v)", r.code, r.err)
			}
			return nil
		},
	}
	if len(cases) != len(gatewaysim.FaultModes()) {
		t.Fatalf("the table covers %d modes, FaultModes lists %d", len(cases), len(gatewaysim.FaultModes()))
	}
	for _, mode := range gatewaysim.FaultModes() {
		t.Run(string(mode), func(t *testing.T) {
			ref := "fault-" + string(mode)
			if err := sim.Script(ref, gatewaysim.Fault(mode)); err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			if mode == gatewaysim.ModeHang || mode == gatewaysim.ModeAcceptThenHang {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 500*time.Millisecond)
				defer cancel()
			}
			if err := cases[mode](submit(ctx, c, sim.URL(core.GatewaySMS), ref, `{}`)); err != nil {
				t.Fatal(err)
			}
			// The next submission is answered normally: accepted, or a
			// duplicate when the fault had accepted the reference first.
			next := answerOf(t, submit(t.Context(), c, sim.URL(core.GatewaySMS), ref, `{}`))
			wantAccepted := mode != gatewaysim.ModeAcceptThenDrop && mode != gatewaysim.ModeAcceptThenHang
			if (next.Status == core.OutcomeAccepted) != wantAccepted {
				t.Fatalf("after the fault the gateway answered %+v; accepted by the fault: %v", next, !wantAccepted)
			}
			st := sim.Reference(ref)
			if st.Submissions != 2 || st.Faults != 1 || st.Accepted != 1 {
				t.Fatalf("reference stats = %+v, want 2 submissions, 1 fault, 1 acceptance", st)
			}
		})
	}
}

func wantTransportError(r reply) error {
	if r.err == nil {
		return fmt.Errorf("want no HTTP answer, got %d %s", r.code, r.body)
	}
	return nil
}

func want200(ok func([]byte) bool) func(reply) error {
	return func(r reply) error {
		if r.err != nil || r.code != http.StatusOK || !ok(r.body) {
			return fmt.Errorf("unexpected reply: code %d, err %v, body %.80q", r.code, r.err, r.body)
		}
		return nil
	}
}

func TestModeAppliesToUnscriptedSubmissionsOnly(t *testing.T) {
	sim := start(t, gatewaysim.Config{Mode: gatewaysim.HTTPStatusMode(500)})
	c := httpClient(t)
	if r := submit(t.Context(), c, sim.URL(core.GatewaySMS), "a", `{}`); r.code != http.StatusInternalServerError {
		t.Fatalf("start mode http_500 answered %d", r.code)
	}
	if err := sim.Script("b", gatewaysim.StepAccepted); err != nil {
		t.Fatal(err)
	}
	if o := answerOf(t, submit(t.Context(), c, sim.URL(core.GatewaySMS), "b", `{}`)); o.Status != core.OutcomeAccepted {
		t.Fatalf("a scripted step must win over the mode, got %+v", o)
	}
	if err := sim.SetMode(gatewaysim.ModeNormal); err != nil {
		t.Fatal(err)
	}
	if o := answerOf(t, submit(t.Context(), c, sim.URL(core.GatewaySMS), "a", `{}`)); o.Status != core.OutcomeAccepted {
		t.Fatalf("after switching to normal: %+v", o)
	}
	if err := sim.SetMode("sleepy"); err == nil {
		t.Fatal("an unknown mode was accepted")
	}
}

func TestRejectRatioAndReasonMix(t *testing.T) {
	mix, err := gatewaysim.ParseReasons("provider_failure=1, invalid_recipient=1")
	if err != nil {
		t.Fatal(err)
	}
	sim := start(t, gatewaysim.Config{RejectRatio: 1, Reasons: mix})
	c := httpClient(t)
	seen := map[string]int{}
	for i := range 200 {
		o := answerOf(t, submit(t.Context(), c, sim.URL(core.GatewaySMS), fmt.Sprint("mix-", i), `{}`))
		if o.Status != core.OutcomeRejected {
			t.Fatalf("reject ratio 1 accepted %+v", o)
		}
		seen[o.Reason]++
	}
	// With equal weights, 200 draws miss a reason with probability 2^-199.
	if len(seen) != 2 || seen["provider_failure"] == 0 || seen["invalid_recipient"] == 0 {
		t.Fatalf("reasons drawn = %v, want both reasons of the mix", seen)
	}
}

func TestLatencyDelaysEveryAnswer(t *testing.T) {
	const latency = 40 * time.Millisecond
	sim := start(t, gatewaysim.Config{Latency: latency, LatencyJitter: 5 * time.Millisecond})
	c := httpClient(t)
	began := time.Now()
	answerOf(t, submit(t.Context(), c, sim.URL(core.GatewaySMS), "slow", `{}`))
	if took := time.Since(began); took < latency {
		t.Fatalf("answer came after %v, before the %v latency", took, latency)
	}
}

func TestConcurrentRepeatsAreAcceptedOnce(t *testing.T) {
	sim := start(t, gatewaysim.Config{Latency: time.Millisecond})
	c := httpClient(t)
	const n = 100
	var wg sync.WaitGroup
	answers := make([]core.Outcome, n)
	for i := range n {
		wg.Go(func() {
			r := submit(t.Context(), c, sim.URL(core.GatewaySMS), "race", `{}`)
			if r.err == nil {
				_ = json.Unmarshal(r.body, &answers[i])
			}
		})
	}
	wg.Wait()
	accepted := 0
	for _, o := range answers {
		switch {
		case o.Status == core.OutcomeAccepted:
			accepted++
		case o.Reason != core.ReasonDuplicateReference:
			t.Fatalf("unexpected answer %+v", o)
		}
	}
	st := sim.Reference("race")
	if accepted != 1 || st.Accepted != 1 || st.Duplicates != n-1 || st.Submissions != n {
		t.Fatalf("%d acceptances answered, stats %+v: want exactly one acceptance of %d", accepted, st, n)
	}
}

func TestMalformedSubmissionsAreInvalidRequests(t *testing.T) {
	sim := start(t, gatewaysim.Config{})
	c := httpClient(t)
	for name, body := range map[string]string{
		"not JSON":     `reference=x`,
		"no reference": `{"payload":{}}`,
		"no payload":   `{"reference":"no-payload"}`,
		"too large":    `{"reference":"big","payload":"` + strings.Repeat("x", 1<<20) + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			want := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonInvalidRequest}
			if got := answerOf(t, post(t.Context(), c, sim.URL(core.GatewaySMS)+"/v1/submissions", body)); got != want {
				t.Fatalf("answer = %+v, want %+v", got, want)
			}
		})
	}
	if st := sim.Stats(); st.Total != 4 || st.Rejected != 4 || st.References["no-payload"].Rejected != 1 {
		t.Fatalf("stats = %+v, want 4 rejected submissions", st)
	}
}

func TestPayloadIsRecordedVerbatim(t *testing.T) {
	sim := start(t, gatewaysim.Config{})
	c := httpClient(t)
	payload := `{ "b":1.50, "a" : ["<&>", "\u00e9"] }`
	answerOf(t, submit(t.Context(), c, sim.URL(core.GatewayPush), "verbatim", payload))
	if got := string(sim.Reference("verbatim").LastPayload); got != payload {
		t.Fatalf("recorded payload %q, sent %q", got, payload)
	}
}

func TestControlEndpoints(t *testing.T) {
	sim := start(t, gatewaysim.Config{})
	c := httpClient(t)
	api, err := gatewayapi.NewClientWithResponses(sim.URL(core.GatewaySMS), gatewayapi.WithHTTPClient(c))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	script, err := api.PutScriptWithResponse(ctx, "ctl", []string{"provider_failure", "mode:http_502", "accepted"})
	if err != nil || script.StatusCode() != http.StatusNoContent {
		t.Fatalf("put script: %v %s", err, script.Body)
	}
	bad, err := api.PutScriptWithResponse(ctx, "ctl", []string{"mode:sleepy"})
	if err != nil || bad.StatusCode() != http.StatusBadRequest || bad.JSON400 == nil || !strings.Contains(bad.JSON400.Error, "sleepy") {
		t.Fatalf("an invalid step must be refused with 400 naming it: %v %s", err, bad.Body)
	}
	codes := []int{}
	for range 3 {
		codes = append(codes, submit(ctx, c, sim.URL(core.GatewaySMS), "ctl", `{}`).code)
	}
	if fmt.Sprint(codes) != "[200 502 200]" {
		t.Fatalf("scripted HTTP statuses = %v, want [200 502 200]", codes)
	}

	stats, err := api.GetStatsWithResponse(ctx, &gatewayapi.GetStatsParams{Reference: ptr("ctl")})
	if err != nil || stats.JSON200 == nil {
		t.Fatalf("get stats: %v %s", err, stats.Body)
	}
	if got := stats.JSON200.References["ctl"]; got.Submissions != 3 || got.Faults != 1 || got.Accepted != 1 || got.Rejected != 1 || string(got.LastPayload) != `{}` {
		t.Fatalf("stats of ctl = %+v", got)
	}

	mode, err := api.SetModeWithResponse(ctx, gatewayapi.ModeRequest{Mode: "unknown_status"})
	if err != nil || mode.StatusCode() != http.StatusNoContent {
		t.Fatalf("set mode: %v %s", err, mode.Body)
	}
	if r := submit(ctx, c, sim.URL(core.GatewaySMS), "m", `{}`); string(r.body) != `{"status":"queued"}` {
		t.Fatalf("mode unknown_status answered %s", r.body)
	}
	if r := submit(ctx, c, sim.URL(core.GatewayPush), "m", `{}`); answerOf(t, r).Status != core.OutcomeAccepted {
		t.Fatalf("a mode set on the sms listener changed the push gateway: %s", r.body)
	}
	badMode, err := api.SetModeWithResponse(ctx, gatewayapi.ModeRequest{Mode: "http_200"})
	if err != nil || badMode.StatusCode() != http.StatusBadRequest {
		t.Fatalf("mode http_200 must be refused: %v %s", err, badMode.Body)
	}

	reset, err := api.ResetWithResponse(ctx)
	if err != nil || reset.StatusCode() != http.StatusNoContent {
		t.Fatalf("reset: %v %s", err, reset.Body)
	}
	if st := sim.StatsOf(core.GatewaySMS); st.Total != 0 || len(st.References) != 0 {
		t.Fatalf("stats after reset = %+v", st)
	}
	if o := answerOf(t, submit(ctx, c, sim.URL(core.GatewaySMS), "ctl", `{}`)); o.Status != core.OutcomeAccepted {
		t.Fatalf("after reset the mode and memory must be back to the start, got %+v", o)
	}
}

func TestResetRestoresStartScripts(t *testing.T) {
	sim := start(t, gatewaysim.Config{Scripts: map[string][]gatewaysim.Step{"s": {"invalid_message"}}})
	c := httpClient(t)
	for range 2 {
		if o := answerOf(t, submit(t.Context(), c, sim.URL(core.GatewaySMS), "s", `{}`)); o.Reason != "invalid_message" {
			t.Fatalf("start script answered %+v", o)
		}
		sim.Reset()
	}
}

func TestStartRefusesAnInvalidConfig(t *testing.T) {
	for name, cfg := range map[string]gatewaysim.Config{
		"ratio above 1":    {RejectRatio: 1.5},
		"negative latency": {Latency: -time.Second},
		"unknown mode":     {Mode: "sleepy"},
		"zero weights":     {Reasons: []gatewaysim.WeightedReason{{Reason: "x", Weight: 0}}},
		"bad script":       {Scripts: map[string][]gatewaysim.Step{"r": {""}}},
	} {
		t.Run(name, func(t *testing.T) {
			if sim, err := gatewaysim.Start(cfg); err == nil {
				_ = sim.Close()
				t.Fatal("Start accepted an invalid config")
			}
		})
	}
}

func TestStartFailsWhenAnAddressIsTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = gatewaysim.Start(gatewaysim.Config{Listen: map[core.GatewayType]string{core.GatewayPush: ln.Addr().String()}})
	if err == nil || !strings.Contains(err.Error(), "push") {
		t.Fatalf("Start on a taken address: err = %v, want an error naming push", err)
	}
}

func TestCloseEndsHangingSubmissionsAndLeaksNothing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	sim, err := gatewaysim.Start(gatewaysim.Config{Mode: gatewaysim.ModeHang})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	done := make(chan reply, 1)
	go func() { done <- submit(context.Background(), c, sim.URL(core.GatewaySMS), "hang", `{}`) }()
	// Wait until the hanging submission reached the gateway. Nothing
	// signals that, so look every millisecond, for ten seconds at most.
	deadline := time.Now().Add(10 * time.Second)
	for sim.Reference("hang").Submissions == 0 {
		if time.Now().After(deadline) {
			_ = sim.Close()
			t.Fatal("the hanging submission did not reach the gateway within 10s")
		}
		time.Sleep(time.Millisecond)
	}
	if err := sim.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if r := <-done; r.err == nil && r.code == http.StatusOK {
		t.Fatalf("a hanging submission got an answer: %d %s", r.code, r.body)
	}
	if err := sim.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if r := post(context.Background(), c, sim.URL(core.GatewaySMS)+"/control/reset", ""); r.err == nil {
		t.Fatalf("the simulator still serves after Close: %d", r.code)
	}
}

func ptr[T any](v T) *T { return &v }

package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tracev1 "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
	"github.com/submissionmanager/submission-manager/core"
)

// Tracing through the real service (docs/operations.md, "Tracing"): a
// client's traceparent reaches the gateway, and with --otlp-endpoint the
// service's spans reach a collector over OTLP/HTTP, in the client's trace
// and under its span.

// The client's trace and span, as its own tracing would have made them.
const (
	clientTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpanID  = "00f067aa0ba902b7"
)

// traceParent spells a W3C traceparent.
func traceParent(traceID, spanID, flags string) string {
	return "00-" + traceID + "-" + spanID + "-" + flags
}

// TestTracingFollowsASubmissionToTheGateway, on every store: a submission
// sent in a client's trace to one instance and executed by another (the
// leader), rejected once then accepted, is traced end to end. The
// collector receives the submit span from the instance that took the
// request, as a child of the client's span, and each attempt's
// reservation, gateway call and result spans from the leader, as children
// of the submit span; the gateway is called under the gateway call span.
func TestTracingFollowsASubmissionToTheGateway(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			col := startCollector(t)
			_, follower, sim := startTracedPair(t, s, col.url)
			const id = "traced-order-1"
			script(t, sim, id, gatewaysim.Rejected("provider_failure"), gatewaysim.StepAccepted)
			submitTraced(t, follower.api, id, traceParent(clientTraceID, clientSpanID, "01"))
			waitAccepted(t, follower.api, id)

			spans := col.waitFor(t, clientTraceID, "the spans of the intent's two attempts", hasIntentSpans(id, 2))
			submit, call := checkIntentSpans(t, spans, id, clientSpanID, 2)
			if submit.instance != "second" {
				t.Errorf("the submit span came from %q, want the instance that took the request (second)", submit.instance)
			}
			for _, sp := range spans {
				if sp.name != spanSubmit && sp.instance != "leader" {
					t.Errorf("the %s span came from %q, want the leader", sp.name, sp.instance)
				}
			}
			checkGatewayTraceParent(t, sim, id, clientTraceID, call.spanID, "01")
		})
	}
}

// TestTracingStartsATraceForAnUntracedSubmission: a submission without a
// traceparent starts a new trace at its submit span, which the gateway
// call joins, so the gateway still receives a valid traceparent.
func TestTracingStartsATraceForAnUntracedSubmission(t *testing.T) {
	col := startCollector(t)
	svc, sim := startTraced(t, col.url)
	const id = "untraced-order"
	submitTraced(t, svc.api, id, "")
	waitAccepted(t, svc.api, id)

	got := sim.Reference(id).LastTraceParent
	if tp, ok := core.NormalizeTraceParent(got); !ok || tp != got {
		t.Fatalf("the gateway received traceparent %q, want a valid one of a new trace", got)
	}
	traceID := got[3:35]
	spans := col.waitFor(t, traceID, "the intent's four spans", hasIntentSpans(id, 1))
	_, call := checkIntentSpans(t, spans, id, "", 1)
	checkGatewayTraceParent(t, sim, id, traceID, call.spanID, "01")
}

// TestTracingOffPassesTheClientsTraceParent: without --otlp-endpoint the
// gateway receives the client's traceparent exactly as sent (a later
// version's as version 00, docs/api.md), and none for a submission that
// came without one; the lookup that resolves a lost answer carries it too.
func TestTracingOffPassesTheClientsTraceParent(t *testing.T) {
	svc, sim := startStandard(t)
	sent := traceParent(clientTraceID, clientSpanID, "01")
	submitTraced(t, svc.api, "off-traced", sent)
	submitTraced(t, svc.api, "off-later-version", "01"+sent[2:]+"-future")
	submitTraced(t, svc.api, "off-untraced", "")
	for _, id := range []string{"off-traced", "off-later-version", "off-untraced"} {
		waitAccepted(t, svc.api, id)
	}
	for _, id := range []string{"off-traced", "off-later-version"} {
		if got := sim.Reference(id).LastTraceParent; got != sent {
			t.Errorf("%s: the gateway received traceparent %q, want the client's %q", id, got, sent)
		}
	}
	if rs := sim.Reference("off-untraced"); rs.Submissions != 1 || rs.LastTraceParent != "" {
		t.Errorf("an untraced submission reached the gateway as %+v, want one call without traceparent", rs)
	}

	// An answer lost after the acceptance is resolved by the gateway's
	// lookup, which carries the client's traceparent too.
	script(t, sim, "off-lost-answer", gatewaysim.Fault(gatewaysim.ModeAcceptThenDrop))
	submitTraced(t, svc.api, "off-lost-answer", sent)
	waitAccepted(t, svc.api, "off-lost-answer")
	if rs := sim.Reference("off-lost-answer"); rs.Lookups < 1 || rs.LastLookupTraceParent != sent {
		t.Errorf("a lost answer was looked up %d times, the latest with traceparent %q; want at least once, with the client's %q",
			rs.Lookups, rs.LastLookupTraceParent, sent)
	}
}

// TestTracingFollowsTheClientsSamplingDecision: a trace the client marked
// unsampled reaches the gateway in that trace, still unsampled, and no
// span of it is exported, while a sampled trace's spans are; the spans
// still queued at shutdown are flushed then.
func TestTracingFollowsTheClientsSamplingDecision(t *testing.T) {
	col := startCollector(t)
	svc, sim := startTraced(t, col.url)
	const unsampledTrace = "0af7651916cd43dd8448eb211c80319c"
	submitTraced(t, svc.api, "unsampled", traceParent(unsampledTrace, clientSpanID, "00"))
	submitTraced(t, svc.api, "sampled", traceParent(clientTraceID, clientSpanID, "01"))
	waitAccepted(t, svc.api, "unsampled")
	waitAccepted(t, svc.api, "sampled")
	stopService(t, svc.srv) // exports what is still queued

	got := sim.Reference("unsampled").LastTraceParent
	if tp, ok := core.NormalizeTraceParent(got); !ok || tp != got || got[3:35] != unsampledTrace || got[53:] != "00" {
		t.Errorf("the gateway received traceparent %q, want one of trace %s, unsampled", got, unsampledTrace)
	}
	if spans := col.received(unsampledTrace); len(spans) != 0 {
		t.Errorf("spans of the unsampled trace were exported: %s", describeSpans(spans))
	}
	if spans := col.received(clientTraceID); !hasIntentSpans("sampled", 1)(spans) {
		t.Errorf("the sampled trace's spans were not all exported by shutdown: %s", describeSpans(spans))
	}
}

// startTraced starts a simulator and one instance exporting its spans to
// endpoint.
func startTraced(t *testing.T, endpoint string) (service, *gatewaysim.Simulator) {
	t.Helper()
	svc, sim := startStandard(t, func(cfg *command.ServeConfig) { cfg.Tracing.OTLPEndpoint = endpoint })
	return svc, sim
}

// startTracedPair starts two instances on one database of store s, both
// exporting to endpoint: "leader", which holds the lease, then "second".
func startTracedPair(t *testing.T, s store, endpoint string) (leader, second service, sim *gatewaysim.Simulator) {
	t.Helper()
	sim = startSimulator(t)
	dir := t.TempDir()
	registry := filepath.Join(dir, "targets.json")
	writeRegistry(t, registry, standardTargets(sim))
	cfg := testConfig(dir, registry)
	s.database(t)(&cfg)
	cfg.Tracing.OTLPEndpoint = endpoint
	cfg.HolderID = "leader"
	leader = startService(t, cfg)
	deadline := time.Now().Add(terminalWait)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !strings.HasPrefix(readyz(t, leader.api), "mode=leader") {
		if time.Now().After(deadline) {
			t.Fatal("the first instance never led")
		}
		<-tick.C
	}
	cfg.HolderID = "second"
	return leader, startService(t, cfg), sim
}

// submitTraced submits an intent to sms.realtime with the traceparent
// header, or without it when traceparent is empty; it must be created.
func submitTraced(t *testing.T, c *client.ClientWithResponses, id, traceparent string) {
	t.Helper()
	var params *client.SubmitIntentParams
	if traceparent != "" {
		params = &client.SubmitIntentParams{Traceparent: &traceparent}
	}
	res, err := c.SubmitIntentWithResponse(context.Background(), params, client.SubmitIntentJSONRequestBody{
		IntentId: id, SubmissionTarget: "sms.realtime", Payload: json.RawMessage(`{"to":"+15550100","text":"hi"}`),
	})
	if err != nil {
		t.Fatalf("submitting %q: %v", id, err)
	}
	if res.StatusCode() != 201 {
		t.Fatalf("submitting %q: %d %s, want 201", id, res.StatusCode(), res.Body)
	}
}

// waitAccepted waits for the intent to end, which must be as accepted.
func waitAccepted(t *testing.T, c *client.ClientWithResponses, id string) {
	t.Helper()
	if in := waitTerminal(t, c, id); in.Status != client.IntentStatusAccepted {
		t.Fatalf("intent %q ended %s, want accepted", id, in.Status)
	}
}

// TestTracingABatchIsOneSubmitSpan: a batch sent in a client's trace is
// one submit span, a child of the client's span, counting its items; each
// intent of it keeps that span's context, so its attempt's spans are the
// batch span's children and its gateway is called under its own gateway
// call span.
func TestTracingABatchIsOneSubmitSpan(t *testing.T) {
	col := startCollector(t)
	svc, sim := startTraced(t, col.url)
	ids := []string{"batch-traced-1", "batch-traced-2"}
	body := `{"intents":[` +
		`{"intentId":"` + ids[0] + `","submissionTarget":"sms.realtime","payload":{"text":"a"}},` +
		`{"intentId":"` + ids[1] + `","submissionTarget":"sms.realtime","payload":{"text":"b"}}]}`
	tp := traceParent(clientTraceID, clientSpanID, "01")
	res, err := svc.api.SubmitIntentBatchWithBodyWithResponse(context.Background(), "application/json", strings.NewReader(body),
		func(_ context.Context, req *http.Request) error { req.Header.Set("traceparent", tp); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode() != 200 {
		t.Fatalf("batch: %d %s, want 200", res.StatusCode(), res.Body)
	}
	for _, id := range ids {
		waitAccepted(t, svc.api, id)
	}

	spans := col.waitFor(t, clientTraceID, "the batch span and both intents' attempt spans", func(spans []exportedSpan) bool {
		return len(spansNamed(spans, spanSubmit)) > 0 && hasAttemptSpans(spans, ids...)
	})
	batch := spansNamed(spans, spanSubmit)
	if len(batch) != 1 {
		t.Fatalf("%d submit spans, want the batch's one: %s", len(batch), describeSpans(spans))
	}
	checkSpan(t, batch[0], tracev1.Span_SPAN_KIND_SERVER, map[string]string{"submission.batch.items": "2", "submission.created": "2"})
	if batch[0].parentID != clientSpanID {
		t.Errorf("the batch span's parent is %q, want the client's span %q", batch[0].parentID, clientSpanID)
	}
	for _, id := range ids {
		for _, name := range attemptSpanNames {
			got := spansOf(spans, id, name, 1)
			if len(got) != 1 || got[0].parentID != batch[0].spanID {
				t.Errorf("intent %q: %s spans %s, want one under the batch span %s", id, name, describeSpans(got), batch[0].spanID)
			}
		}
		if call := spansOf(spans, id, spanGatewayCall, 1); len(call) == 1 {
			checkGatewayTraceParent(t, sim, id, clientTraceID, call[0].spanID, "01")
		}
	}
}

// TestTracingAResubmissionStaysInTheOriginalsTrace: an operator's
// resubmission of an ended intent is executed in the trace the original
// was submitted in: its attempt's spans are children of the original's
// submit span, and its gateway is called under its own gateway call span.
func TestTracingAResubmissionStaysInTheOriginalsTrace(t *testing.T) {
	col := startCollector(t)
	svc, sim := startTraced(t, col.url)
	const original = "resubmitted-order"
	script(t, sim, original, gatewaysim.Rejected("invalid_recipient"))
	submitTraced(t, svc.api, original, traceParent(clientTraceID, clientSpanID, "01"))
	if in := waitTerminal(t, svc.api, original); in.Status != client.IntentStatusRejected {
		t.Fatalf("the original ended %s, want rejected", in.Status)
	}
	res, err := svc.api.ResubmitIntentWithResponse(context.Background(), original, client.ResubmissionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.JSON201 == nil {
		t.Fatalf("resubmitting: %d %s, want 201", res.StatusCode(), res.Body)
	}
	again := res.JSON201.IntentId
	waitAccepted(t, svc.api, again)

	spans := col.waitFor(t, clientTraceID, "the original's submit span and the resubmission's attempt spans", func(spans []exportedSpan) bool {
		return len(spansOf(spans, original, spanSubmit, 0)) > 0 && hasAttemptSpans(spans, again)
	})
	submit := spansOf(spans, original, spanSubmit, 0)
	if len(submit) != 1 {
		t.Fatalf("%d submit spans of the original, want one: %s", len(submit), describeSpans(spans))
	}
	if got := spansOf(spans, again, spanSubmit, 0); len(got) != 0 {
		t.Errorf("the resubmission has submit spans of its own: %s", describeSpans(got))
	}
	for _, name := range attemptSpanNames {
		got := spansOf(spans, again, name, 1)
		if len(got) != 1 || got[0].parentID != submit[0].spanID {
			t.Errorf("the resubmission's %s spans %s, want one under the original's submit span %s", name, describeSpans(got), submit[0].spanID)
		}
	}
	if call := spansOf(spans, again, spanGatewayCall, 1); len(call) == 1 {
		checkGatewayTraceParent(t, sim, again, clientTraceID, call[0].spanID, "01")
	}
}

package executor_test

import (
	"testing"

	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/tracefake"
	"github.com/submissionmanager/submission-manager/ports"
)

// clientTrace is the traceparent an intent was submitted in.
const clientTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// submitTraced stores an intent that keeps clientTrace, as intake stores
// one submitted with a traceparent header.
func (h *harness) submitTraced(id string, c core.Contract) {
	h.t.Helper()
	in := h.newIntent(id, c, `{"to": "+15550100", "text": "hi"}`)
	in.TraceParent = clientTrace
	h.create(h.store, in, true)
}

// Each attempt is three spans under the trace its intent keeps: the
// reservation, the gateway call (whose own trace context is what the
// gateway receives, so the gateway's spans join the submitting trace) and
// the result, each ended once with how its work ended.
func TestAnAttemptIsTracedUnderItsIntentsTrace(t *testing.T) {
	tracer := &tracefake.Tracer{}
	h := newHarness(t, func(c *executor.Config) { c.Tracer = tracer })
	mark, _ := h.metrics.inFlightReports()
	h.startLead()
	h.on("i-1", accepted)
	h.submitTraced("i-1", smsDeadline)
	h.waitStatus("i-1", core.StatusAccepted)
	h.awaitIdle(mark, t0.Add(h.refreshInterval())) // the attempt's spans ended
	call := h.gw.CallsFor("i-1")

	spans := tracer.Spans()
	want := []ports.SpanKind{ports.SpanReservation, ports.SpanGatewayCall, ports.SpanResult}
	if len(spans) != len(want) {
		t.Fatalf("%d spans, want %d (reservation, gateway call, result)", len(spans), len(want))
	}
	for i, s := range spans {
		if s.Kind != want[i] {
			t.Fatalf("span %d is a %s span, want %s", i, s.Kind, want[i])
		}
		if s.Subject != ports.AttemptSubject(mustGet(h, "i-1"), 1) || s.Subject.TraceParent != clientTrace {
			t.Errorf("%s span's subject %+v, want attempt 1 of i-1 under the client's trace", s.Kind, s.Subject)
		}
		if n := len(s.Ends()); n != 1 {
			t.Errorf("%s span ended %d times, want once", s.Kind, n)
		}
	}
	if len(call) != 1 || call[0].Params.TraceParent != spans[1].Own {
		t.Fatalf("the gateway received traceparent %q, want the gateway call span's %q", call[0].Params.TraceParent, spans[1].Own)
	}
	if e := spans[0].Ends()[0]; e.Err != nil {
		t.Errorf("reservation span ended with %v, want no error", e.Err)
	}
	if e := spans[1].Ends()[0]; e.Err != nil || e.Outcome == nil || e.Outcome.Status != core.OutcomeAccepted {
		t.Errorf("gateway call span ended with %+v, want the accepted outcome", e)
	}
	if e := spans[2].Ends()[0]; e.Err != nil || e.Status != core.StatusAccepted {
		t.Errorf("result span ended with %+v, want status accepted", e)
	}
}

// With tracing off (the default tracer) the gateway still receives the
// traceparent the intent was submitted in.
func TestTheGatewayReceivesTheIntentsTraceWithTracingOff(t *testing.T) {
	h := newHarness(t)
	h.startLead()
	h.on("i-1", accepted)
	h.submitTraced("i-1", smsDeadline)
	h.waitStatus("i-1", core.StatusAccepted)
	if call := h.gw.CallsFor("i-1"); len(call) != 1 || call[0].Params.TraceParent != clientTrace {
		t.Fatalf("the gateway received %+v, want one call with traceparent %s", call, clientTrace)
	}
}

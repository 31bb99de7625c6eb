// Package tracertest is the conformance suite of ports.Tracer. Every
// implementation runs it from its own tests:
//
//	func TestTracerConformance(t *testing.T) {
//		tracertest.Run(t, func(t *testing.T) ports.Tracer { return newTracer(t) })
//	}
//
// What it holds every tracer to, through the port alone: a span started
// under an intent's trace context stays in that trace (the trace context
// it gives to keep or to send has the parent's trace-id and sampling
// decision, in core.NormalizeTraceParent's form), so that what a gateway
// receives always belongs to the submitting trace; a span without a parent
// gives no trace context or a valid one; every kind of span can be ended
// with every kind of end; and spans may be started and ended from many
// goroutines at once.
package tracertest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Run runs every case as a subtest, each on a fresh tracer.
func Run(t *testing.T, newTracer func(t *testing.T) ports.Tracer) {
	t.Helper()
	cases := []struct {
		name string
		fn   func(t *testing.T, tr ports.Tracer)
	}{
		{"SpansStayInTheParentTrace", testStayInTrace},
		{"SamplingFollowsTheParent", testSamplingFollowsParent},
		{"NoParent", testNoParent},
		{"EveryEnd", testEveryEnd},
		{"Concurrent", testConcurrent},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.fn(t, newTracer(t))
		})
	}
}

// Parent is a sampled traceparent the suite starts spans under.
const Parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// unsampled is Parent with the sampled flag off.
const unsampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"

var kinds = []ports.SpanKind{ports.SpanSubmit, ports.SpanReservation, ports.SpanGatewayCall, ports.SpanResult}

func subject(parent string) ports.SpanSubject {
	return ports.SpanSubject{TraceParent: parent, IntentID: "order-1", SubmissionTarget: "sms.realtime",
		GatewayType: core.GatewaySMS, Attempt: 1}
}

// traceID is a traceparent's trace-id.
func traceID(tp string) string { return tp[3:35] }

// checkChild fails unless got is a valid traceparent in parent's trace
// with parent's flags.
func checkChild(t *testing.T, what, got, parent string) {
	t.Helper()
	if norm, ok := core.NormalizeTraceParent(got); !ok || norm != got {
		t.Fatalf("%s: TraceParent %q is not a traceparent in version-00 form", what, got)
	}
	if traceID(got) != traceID(parent) {
		t.Errorf("%s: TraceParent %q left the parent's trace %s", what, got, traceID(parent))
	}
	if got[53:] != parent[53:] {
		t.Errorf("%s: TraceParent %q has flags %s, the parent's are %s", what, got, got[53:], parent[53:])
	}
}

func testStayInTrace(t *testing.T, tr ports.Tracer) {
	for _, k := range kinds {
		span := tr.Start(t.Context(), k, subject(Parent))
		checkChild(t, k.String(), span.TraceParent(), Parent)
		span.End(ports.SpanEnd{})
	}
}

func testSamplingFollowsParent(t *testing.T, tr ports.Tracer) {
	for _, k := range kinds {
		span := tr.Start(t.Context(), k, subject(unsampled))
		checkChild(t, k.String()+" under an unsampled parent", span.TraceParent(), unsampled)
		span.End(ports.SpanEnd{})
	}
}

func testNoParent(t *testing.T, tr ports.Tracer) {
	for _, k := range kinds {
		span := tr.Start(t.Context(), k, subject(""))
		if got := span.TraceParent(); got != "" {
			if norm, ok := core.NormalizeTraceParent(got); !ok || norm != got {
				t.Errorf("%s without a parent: TraceParent %q is neither empty nor a traceparent", k, got)
			}
		}
		span.End(ports.SpanEnd{})
	}
}

func testEveryEnd(t *testing.T, tr ports.Tracer) {
	rejected := &core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonInvalidRecipient}
	ends := []ports.SpanEnd{
		{},
		{Err: errors.New("store unavailable")},
		{Err: &core.FieldError{Field: "intentId", Message: "is required"}, Refused: true},
		{Outcome: &core.Outcome{Status: core.OutcomeAccepted, MessageID: "m-1"}},
		{Outcome: rejected},
		{Err: fmt.Errorf("gateway call timed out: %w", ports.ErrAnswerLost)},
		{Status: core.StatusRejected},
		{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedMaxAttempts},
		{Created: 3, RefusedItems: 1},
	}
	for _, k := range kinds {
		for _, e := range ends {
			tr.Start(t.Context(), k, subject(Parent)).End(e)
		}
	}
}

func testConcurrent(t *testing.T, tr ports.Tracer) {
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				s := subject(Parent)
				s.Attempt = g*50 + i + 1
				span := tr.Start(t.Context(), kinds[i%len(kinds)], s)
				if got := span.TraceParent(); len(got) != core.TraceParentLength || traceID(got) != traceID(Parent) {
					t.Errorf("concurrent span: TraceParent %q", got)
				}
				span.End(ports.SpanEnd{})
			}
		})
	}
	wg.Wait()
}

package ports_test

import (
	"context"
	"errors"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/tracertest"
)

func TestNopTracerConformance(t *testing.T) {
	tracertest.Run(t, func(*testing.T) ports.Tracer { return ports.NopTracer{} })
}

// TestNopTracerCarriesTheParent: with tracing off, the traceparent a
// submission came with is what the intent keeps and the gateway receives.
func TestNopTracerCarriesTheParent(t *testing.T) {
	in := core.Intent{IntentID: "a", TraceParent: tracertest.Parent}
	for _, k := range []ports.SpanKind{ports.SpanSubmit, ports.SpanReservation, ports.SpanGatewayCall, ports.SpanResult} {
		if got := (ports.NopTracer{}).Start(t.Context(), k, ports.AttemptSubject(in, 1)).TraceParent(); got != tracertest.Parent {
			t.Errorf("%s: TraceParent %q, want the parent %q", k, got, tracertest.Parent)
		}
	}
	if got := (ports.NopTracer{}).Start(t.Context(), ports.SpanSubmit, ports.SpanSubject{}).TraceParent(); got != "" {
		t.Errorf("no parent: TraceParent %q, want none", got)
	}
}

// TestZeroSpan: a Span nobody started is safe to read and end.
func TestZeroSpan(t *testing.T) {
	var s ports.Span
	s.End(ports.SpanEnd{Err: errors.New("x")})
	if s.TraceParent() != "" {
		t.Errorf("zero span: TraceParent %q", s.TraceParent())
	}
}

// recorder counts the ends it is given.
type recorder struct{ ends []ports.SpanEnd }

func (r *recorder) TraceParent() string {
	return "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01"
}
func (r *recorder) End(e ports.SpanEnd) { r.ends = append(r.ends, e) }
func (r *recorder) Start() ports.Span   { return ports.NewSpan(r) }
func (r *recorder) last() (ports.SpanEnd, bool) {
	if len(r.ends) == 0 {
		return ports.SpanEnd{}, false
	}
	return r.ends[len(r.ends)-1], true
}

// TestRecordingSpan: a span with a recorder gives the recorder's trace
// context, not its parent's, and hands it the end.
func TestRecordingSpan(t *testing.T) {
	r := &recorder{}
	s := r.Start()
	if s.TraceParent() != r.TraceParent() {
		t.Errorf("TraceParent %q, want the recorder's", s.TraceParent())
	}
	s.End(ports.SpanEnd{Created: 2})
	if e, ok := r.last(); !ok || e.Created != 2 {
		t.Errorf("the recorder got %+v, %v", e, ok)
	}
}

// attemptSpans is what an attempt does with its tracer: the three spans of
// the pipeline, the gateway call's trace context read for the call.
func attemptSpans(ctx context.Context, tr ports.Tracer, in core.Intent, o *core.Outcome, err error) string {
	sub := ports.AttemptSubject(in, 2)
	tr.Start(ctx, ports.SpanReservation, sub).End(ports.SpanEnd{Err: err})
	call := tr.Start(ctx, ports.SpanGatewayCall, sub)
	tp := call.TraceParent()
	call.End(ports.SpanEnd{Outcome: o, Err: err})
	tr.Start(ctx, ports.SpanResult, sub).End(ports.SpanEnd{Status: core.StatusPending, Err: err})
	return tp
}

var sink string

// TestNopTracerAllocatesNothing pins the cost of tracing when it is off:
// an attempt's spans, called through the port as the executor calls
// them, allocate nothing. (Allocations are counted, not timed.)
func TestNopTracerAllocatesNothing(t *testing.T) {
	var tr ports.Tracer = ports.NopTracer{}
	in := core.Intent{IntentID: "order-1", SubmissionTarget: "sms.realtime", TraceParent: tracertest.Parent,
		Contract: core.Contract{GatewayType: core.GatewaySMS}}
	o := &core.Outcome{Status: core.OutcomeAccepted, MessageID: "m-1"}
	failed := errors.New("gateway call timed out")
	ctx := t.Context()
	if n := testing.AllocsPerRun(100, func() { sink = attemptSpans(ctx, tr, in, o, failed) }); n != 0 {
		t.Errorf("an attempt's spans with tracing off allocate %v times, want 0", n)
	}
	if sink != tracertest.Parent {
		t.Errorf("the gateway call carries %q, want the intent's %q", sink, tracertest.Parent)
	}
}

// BenchmarkNopTracer is an attempt's tracing cost with tracing off: three
// spans started and ended through the port (0 allocs/op).
func BenchmarkNopTracer(b *testing.B) {
	var tr ports.Tracer = ports.NopTracer{}
	in := core.Intent{IntentID: "order-1", SubmissionTarget: "sms.realtime", TraceParent: tracertest.Parent,
		Contract: core.Contract{GatewayType: core.GatewaySMS}}
	o := &core.Outcome{Status: core.OutcomeAccepted, MessageID: "m-1"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sink = attemptSpans(ctx, tr, in, o, nil)
	}
}

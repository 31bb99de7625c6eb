package ports

import (
	"context"

	"github.com/submissionmanager/submission-manager/core"
)

// SpanKind names one of the spans the service makes. Each intent's spans
// are children of the trace context it keeps (core.Intent.TraceParent), so
// a trace shows a submission, then each of its attempts as a reservation,
// a gateway call and a result, however much later and on whichever
// instance they run.
type SpanKind uint8

// The spans of an intent's life.
const (
	// SpanSubmit is one submission request in the intake service: a
	// single intent or a batch. Its parent is the traceparent the client
	// sent; the trace context it gives (Span.TraceParent) is what the
	// created intents keep.
	SpanSubmit SpanKind = iota + 1
	// SpanReservation is an attempt's fenced reservation (StartAttempt),
	// durable before any call.
	SpanReservation
	// SpanGatewayCall is one call to the gateway. Its trace context is what
	// the gateway receives as traceparent (SubmitParams.TraceParent), so
	// the gateway's own spans are its children.
	SpanGatewayCall
	// SpanResult is the recording of an attempt's result and the policy's
	// decision (FinishAttempt).
	SpanResult
)

// String names the span kind as implementations name their spans.
func (k SpanKind) String() string {
	switch k {
	case SpanSubmit:
		return "submit"
	case SpanReservation:
		return "reservation"
	case SpanGatewayCall:
		return "gateway call"
	case SpanResult:
		return "result"
	}
	return "span"
}

// SpanSubject is what a span is about. Only the fields its kind has are
// set; a value of it costs no allocation to build or pass.
type SpanSubject struct {
	// TraceParent is the span's parent, a W3C traceparent in
	// core.NormalizeTraceParent's form: the one the client sent for a
	// submit span, the intent's for the others. Empty starts a new trace
	// (when tracing is on).
	TraceParent      string
	IntentID         string
	SubmissionTarget string
	GatewayType      core.GatewayType
	// Attempt is the attempt's number, from 1; 0 on a submit span.
	Attempt int
	// Items, on a submit span of a batch, counts the batch's items.
	Items int
}

// AttemptSubject is the subject of the spans of attempt number attempt of
// intent in: its reservation, gateway call and result.
func AttemptSubject(in core.Intent, attempt int) SpanSubject {
	return SpanSubject{
		TraceParent:      in.TraceParent,
		IntentID:         in.IntentID,
		SubmissionTarget: in.SubmissionTarget,
		GatewayType:      in.Contract.GatewayType,
		Attempt:          attempt,
	}
}

// SpanEnd is how a span's work ended. Only the fields its kind has are set.
type SpanEnd struct {
	// Err is what kept the work from succeeding: a store write that
	// failed or was fenced, a gateway call without a well-formed answer,
	// a submission the store could not take. Implementations mark the span
	// as failed, unless Refused says otherwise.
	Err error
	// Refused says Err refused what the caller sent (an invalid field, an
	// unknown target, an idempotency conflict): an answer, as an HTTP 4xx
	// is, not a failure of the service.
	Refused bool
	// Outcome, on a gateway call span, is the gateway's well-formed answer.
	Outcome *core.Outcome
	// Status, on a submit span of one intent or on a result span, is the
	// intent's status afterwards; ExhaustedReason goes with exhausted.
	Status          core.IntentStatus
	ExhaustedReason core.ExhaustedReason
	// Created and RefusedItems count, on a submit span, the intents the
	// submission created and the items it refused.
	Created, RefusedItems int
}

// Tracer starts the service's spans. The application calls it at each
// stage of an intent's life (see SpanKind); an adapter exports the spans
// (adapters/otel), and NopTracer, the default, makes none at the cost of a
// nil check. Implementations must be safe for concurrent use and must not
// block: they sit on the attempt's path.
type Tracer interface {
	// Start begins a span of kind about subject, as a child of
	// subject.TraceParent (or of the span ctx carries, when that is
	// empty). The caller ends it exactly once.
	Start(ctx context.Context, kind SpanKind, subject SpanSubject) Span
}

// SpanRecorder is an implementation's side of a started span.
type SpanRecorder interface {
	// TraceParent is the span's own trace context as a W3C traceparent:
	// the subject's trace-id with this span's id.
	TraceParent() string
	// End ends the span with how its work ended.
	End(SpanEnd)
}

// Span is a started span. It is a small value rather than an interface,
// so that with tracing off it holds only the parent it was given and
// costs nothing to make, pass or end; its zero value is a span of no
// trace, safe to end.
type Span struct {
	parent string
	rec    SpanRecorder
}

// NewSpan wraps an implementation's recorder of a started span.
func NewSpan(rec SpanRecorder) Span { return Span{rec: rec} }

// UntracedSpan is the span of a tracer that records nothing: it carries
// parent through, so that a traceparent the service received is still kept
// and sent on with tracing off.
func UntracedSpan(parent string) Span { return Span{parent: parent} }

// TraceParent is the trace context to keep with an intent (submit) or to
// send to the gateway (gateway call): the span's own when it records, else
// the parent it was started under, which may be empty.
func (s Span) TraceParent() string {
	if s.rec == nil {
		return s.parent
	}
	return s.rec.TraceParent()
}

// End ends the span with how its work ended; a span that records nothing
// ignores it.
func (s Span) End(e SpanEnd) {
	if s.rec != nil {
		s.rec.End(e)
	}
}

// NopTracer makes no spans. It is the default of every service that takes
// a Tracer: its spans carry their parent's trace context through, and
// cost no allocation (BenchmarkNopTracer).
type NopTracer struct{}

var _ Tracer = NopTracer{}

// Start returns an untraced span that carries subject.TraceParent.
func (NopTracer) Start(_ context.Context, _ SpanKind, subject SpanSubject) Span {
	return UntracedSpan(subject.TraceParent)
}

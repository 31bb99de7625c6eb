package otel

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/submissionmanager/submission-manager/ports"
)

// Scope is the instrumentation scope the service's spans carry.
const Scope = "github.com/submissionmanager/submission-manager"

// The attributes the spans carry, named in the service's own namespace
// with the spec's vocabulary.
const (
	AttrIntentID        = attribute.Key("submission.intent_id")
	AttrTarget          = attribute.Key("submission.target")
	AttrGatewayType     = attribute.Key("submission.gateway_type")
	AttrAttempt         = attribute.Key("submission.attempt")
	AttrBatchItems      = attribute.Key("submission.batch.items")
	AttrCreated         = attribute.Key("submission.created")
	AttrRefusedItems    = attribute.Key("submission.refused_items")
	AttrRefusal         = attribute.Key("submission.refusal")
	AttrOutcomeStatus   = attribute.Key("submission.outcome.status")
	AttrOutcomeReason   = attribute.Key("submission.outcome.reason")
	AttrMessageID       = attribute.Key("submission.outcome.message_id")
	AttrIntentStatus    = attribute.Key("submission.intent.status")
	AttrExhaustedReason = attribute.Key("submission.intent.exhausted_reason")
)

// spanNames are the spans' names by kind: few and fixed, as span names
// should be; what a span is about goes in its attributes.
var spanNames = map[ports.SpanKind]string{
	ports.SpanSubmit:      "intent submit",
	ports.SpanReservation: "attempt reservation",
	ports.SpanGatewayCall: "gateway call",
	ports.SpanResult:      "attempt result",
}

// spanKinds place the spans for trace viewers: the submission serves a
// client's request, the gateway call is a request to another service, and
// the rest is the service's own work.
var spanKinds = map[ports.SpanKind]trace.SpanKind{
	ports.SpanSubmit:      trace.SpanKindServer,
	ports.SpanReservation: trace.SpanKindInternal,
	ports.SpanGatewayCall: trace.SpanKindClient,
	ports.SpanResult:      trace.SpanKindInternal,
}

// Tracer makes the service's spans with an OpenTelemetry tracer provider.
type Tracer struct {
	tracer trace.Tracer
}

var _ ports.Tracer = (*Tracer)(nil)

// NewTracer makes the spans with provider: the SDK's, exporting over OTLP
// (New), or any other, such as one recording into memory in a test.
func NewTracer(provider trace.TracerProvider) *Tracer {
	return &Tracer{tracer: provider.Tracer(Scope)}
}

// w3c reads and writes traceparent exactly as OpenTelemetry propagates it.
var w3c = propagation.TraceContext{}

// Start begins a span of kind about subject, as a child of
// subject.TraceParent, or of the span ctx carries when there is none.
func (t *Tracer) Start(ctx context.Context, kind ports.SpanKind, subject ports.SpanSubject) ports.Span {
	if subject.TraceParent != "" {
		ctx = w3c.Extract(ctx, traceParentCarrier(subject.TraceParent))
	}
	attrs := make([]attribute.KeyValue, 0, 5)
	if subject.IntentID != "" {
		attrs = append(attrs, AttrIntentID.String(text(subject.IntentID)))
	}
	if subject.SubmissionTarget != "" {
		attrs = append(attrs, AttrTarget.String(text(subject.SubmissionTarget)))
	}
	if subject.GatewayType != "" {
		attrs = append(attrs, AttrGatewayType.String(string(subject.GatewayType)))
	}
	if subject.Attempt > 0 {
		attrs = append(attrs, AttrAttempt.Int(subject.Attempt))
	}
	if subject.Items > 0 {
		attrs = append(attrs, AttrBatchItems.Int(subject.Items))
	}
	name, ok := spanNames[kind]
	if !ok {
		name = kind.String()
	}
	_, span := t.tracer.Start(ctx, name, trace.WithSpanKind(spanKinds[kind]), trace.WithAttributes(attrs...))
	return ports.NewSpan(&recorder{span: span, kind: kind})
}

// recorder is a started OpenTelemetry span behind ports.Span.
type recorder struct {
	span trace.Span
	kind ports.SpanKind
}

// TraceParent is the span's own context as a W3C traceparent, written by
// the same propagator that reads them.
func (r *recorder) TraceParent() string {
	var c capturedTraceParent
	w3c.Inject(trace.ContextWithSpanContext(context.Background(), r.span.SpanContext()), &c)
	return string(c)
}

// End records how the span's work ended and ends it. A failure marks the
// span as failed; a refusal of what the caller sent is only noted, as an
// HTTP server span does not fail for a 4xx.
func (r *recorder) End(e ports.SpanEnd) {
	if r.span.IsRecording() {
		r.span.SetAttributes(endAttributes(r.kind, e)...)
		switch {
		case e.Err != nil && e.Refused:
			r.span.SetAttributes(AttrRefusal.String(text(e.Err.Error())))
		case e.Err != nil:
			err := e.Err
			if msg := err.Error(); !utf8.ValidString(msg) {
				err = errors.New(text(msg))
			}
			r.span.RecordError(err)
			r.span.SetStatus(codes.Error, err.Error())
		}
	}
	r.span.End()
}

// endAttributes are the attributes of how a span of kind ended.
func endAttributes(kind ports.SpanKind, e ports.SpanEnd) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if o := e.Outcome; o != nil {
		attrs = append(attrs, AttrOutcomeStatus.String(string(o.Status)))
		if o.Reason != "" {
			attrs = append(attrs, AttrOutcomeReason.String(o.Reason))
		}
		if o.MessageID != "" {
			attrs = append(attrs, AttrMessageID.String(o.MessageID))
		}
	}
	if e.Status != "" {
		attrs = append(attrs, AttrIntentStatus.String(string(e.Status)))
	}
	if e.ExhaustedReason != "" {
		attrs = append(attrs, AttrExhaustedReason.String(string(e.ExhaustedReason)))
	}
	if kind == ports.SpanSubmit {
		attrs = append(attrs, AttrCreated.Int(e.Created))
		if e.RefusedItems > 0 {
			attrs = append(attrs, AttrRefusedItems.Int(e.RefusedItems))
		}
	}
	return attrs
}

// text makes s fit to export: OTLP carries strings as protobuf strings,
// which must be valid UTF-8, or the whole batch of spans fails to encode.
// What a client sent (an intentId it was refused for) or a gateway
// answered may be anything.
func text(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// traceParentCarrier hands one traceparent to the propagator.
type traceParentCarrier string

func (c traceParentCarrier) Get(key string) string {
	if key == "traceparent" {
		return string(c)
	}
	return ""
}
func (traceParentCarrier) Set(string, string) {}
func (traceParentCarrier) Keys() []string     { return []string{"traceparent"} }

// capturedTraceParent takes the traceparent the propagator writes.
type capturedTraceParent string

func (c *capturedTraceParent) Set(key, value string) {
	if key == "traceparent" {
		*c = capturedTraceParent(value)
	}
}
func (*capturedTraceParent) Get(string) string { return "" }
func (*capturedTraceParent) Keys() []string    { return nil }

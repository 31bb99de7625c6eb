package otel_test

import (
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/submissionmanager/submission-manager/adapters/otel"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/tracertest"
)

// recording is a tracer whose spans land in memory as they end, sampled
// as New samples them.
func recording(t *testing.T, ratio float64) (*otel.Tracer, *tracetest.InMemoryExporter) {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))))
	t.Cleanup(func() { _ = provider.Shutdown(t.Context()) })
	return otel.NewTracer(provider), spans
}

func TestTracerConformance(t *testing.T) {
	tracertest.Run(t, func(t *testing.T) ports.Tracer {
		tr, _ := recording(t, 1)
		return tr
	})
}

// clientTrace is the traceparent a client sends with its submission.
const clientTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestAnIntentsLifeIsOneTrace follows a submission and its attempt as the
// service makes their spans: the submit span is the client's span's child,
// the intent keeps the submit span's context, every span of the attempt is
// a child of it, and the gateway receives the gateway call span's own
// context. What went wrong is marked on the span it went wrong in.
func TestAnIntentsLifeIsOneTrace(t *testing.T) {
	tr, spans := recording(t, 1)
	ctx := t.Context()

	submit := tr.Start(ctx, ports.SpanSubmit, ports.SpanSubject{TraceParent: clientTrace, IntentID: "order-1", SubmissionTarget: "sms.realtime"})
	in := core.Intent{IntentID: "order-1", SubmissionTarget: "sms.realtime", TraceParent: submit.TraceParent(),
		Contract: core.Contract{GatewayType: core.GatewaySMS}}
	submit.End(ports.SpanEnd{Status: core.StatusPending, Created: 1})

	sub := ports.AttemptSubject(in, 1)
	tr.Start(ctx, ports.SpanReservation, sub).End(ports.SpanEnd{})
	call := tr.Start(ctx, ports.SpanGatewayCall, sub)
	sent := call.TraceParent()
	call.End(ports.SpanEnd{Err: errors.New("gateway call timed out after 10s")})
	tr.Start(ctx, ports.SpanResult, sub).End(ports.SpanEnd{Status: core.StatusPending})

	sub = ports.AttemptSubject(in, 2)
	tr.Start(ctx, ports.SpanReservation, sub).End(ports.SpanEnd{})
	accepted := &core.Outcome{Status: core.OutcomeAccepted, MessageID: "m-2"}
	tr.Start(ctx, ports.SpanGatewayCall, sub).End(ports.SpanEnd{Outcome: accepted})
	tr.Start(ctx, ports.SpanResult, sub).End(ports.SpanEnd{Status: core.StatusAccepted})

	got := spans.GetSpans()
	if len(got) != 7 {
		t.Fatalf("%d spans exported, want 7", len(got))
	}
	clientSC := trace.SpanContextConfig{}
	clientSC.TraceID, _ = trace.TraceIDFromHex(clientTrace[3:35])
	clientSC.SpanID, _ = trace.SpanIDFromHex(clientTrace[36:52])
	submitSpan := got[0]
	if submitSpan.Name != "intent submit" || submitSpan.SpanKind != trace.SpanKindServer ||
		submitSpan.Parent.SpanID() != clientSC.SpanID || !submitSpan.Parent.IsRemote() {
		t.Errorf("submit span %q kind %v parent %v: want a server span under the client's span", submitSpan.Name, submitSpan.SpanKind, submitSpan.Parent.SpanID())
	}
	if want := "00-" + clientTrace[3:35] + "-" + submitSpan.SpanContext.SpanID().String() + "-01"; in.TraceParent != want {
		t.Errorf("the intent keeps %q, want the submit span's context %q", in.TraceParent, want)
	}
	if a := attrs(submitSpan); a[otel.AttrCreated].AsInt64() != 1 || a[otel.AttrIntentID].AsString() != "order-1" {
		t.Errorf("submit span attributes %v", submitSpan.Attributes)
	}
	wantNames := []string{"intent submit", "attempt reservation", "gateway call", "attempt result",
		"attempt reservation", "gateway call", "attempt result"}
	for i, s := range got {
		if s.SpanContext.TraceID() != clientSC.TraceID {
			t.Errorf("span %d (%s) is in trace %s, want the client's %s", i, s.Name, s.SpanContext.TraceID(), clientSC.TraceID)
		}
		if s.Name != wantNames[i] {
			t.Errorf("span %d is %q, want %q", i, s.Name, wantNames[i])
		}
		if i > 0 && s.Parent.SpanID() != submitSpan.SpanContext.SpanID() {
			t.Errorf("span %d (%s) has parent %s, want the submit span %s", i, s.Name, s.Parent.SpanID(), submitSpan.SpanContext.SpanID())
		}
		if i > 0 {
			if a := attrs(s); a[otel.AttrAttempt].AsInt64() != int64((i+2)/3) || a[otel.AttrGatewayType].AsString() != "sms" {
				t.Errorf("span %d (%s) attributes %v", i, s.Name, s.Attributes)
			}
		}
	}
	failed, ok := got[2], got[5]
	if failed.SpanKind != trace.SpanKindClient || sent != "00-"+clientTrace[3:35]+"-"+failed.SpanContext.SpanID().String()+"-01" {
		t.Errorf("the gateway received %q; want the client gateway call span's own context %s", sent, failed.SpanContext.SpanID())
	}
	if failed.Status.Code != codes.Error || len(failed.Events) == 0 {
		t.Errorf("the timed-out call's span has status %v and %d events, want an error", failed.Status, len(failed.Events))
	}
	if a := attrs(ok); ok.Status.Code == codes.Error || a[otel.AttrOutcomeStatus].AsString() != "accepted" || a[otel.AttrMessageID].AsString() != "m-2" {
		t.Errorf("the accepted call's span: status %v, attributes %v", ok.Status, ok.Attributes)
	}
	if a := attrs(got[6]); a[otel.AttrIntentStatus].AsString() != "accepted" {
		t.Errorf("the last result span's attributes %v", got[6].Attributes)
	}
}

// TestRefusalIsNoFailure: a submission refused for what the client sent is
// an answer, noted on the span; the store failing is a failure.
func TestRefusalIsNoFailure(t *testing.T) {
	tr, spans := recording(t, 1)
	refusal := &core.FieldError{Field: "intentId", Message: "is required"}
	tr.Start(t.Context(), ports.SpanSubmit, ports.SpanSubject{}).End(ports.SpanEnd{Err: refusal, Refused: true})
	tr.Start(t.Context(), ports.SpanSubmit, ports.SpanSubject{}).End(ports.SpanEnd{Err: core.ErrStoreUnavailable})
	got := spans.GetSpans()
	if len(got) != 2 {
		t.Fatalf("%d spans, want 2", len(got))
	}
	if got[0].Status.Code == codes.Error || attrs(got[0])[otel.AttrRefusal].AsString() != refusal.Error() {
		t.Errorf("refused submission: status %v, attributes %v; want no error and the refusal noted", got[0].Status, got[0].Attributes)
	}
	if got[1].Status.Code != codes.Error {
		t.Errorf("failed submission: status %v, want an error", got[1].Status)
	}
}

// TestSamplingFollowsTheSubmission: with no new trace sampled, a
// submission without a traceparent records nothing and its intent's
// context says so, while a client's sampled trace is recorded in full and
// an unsampled one not at all.
func TestSamplingFollowsTheSubmission(t *testing.T) {
	tr, spans := recording(t, 0)
	ctx := t.Context()
	root := tr.Start(ctx, ports.SpanSubmit, ports.SpanSubject{IntentID: "a"})
	kept := root.TraceParent()
	root.End(ports.SpanEnd{})
	if tp, ok := core.NormalizeTraceParent(kept); !ok || tp[53:] != "00" {
		t.Errorf("an unsampled new trace gives the intent %q, want a valid traceparent flagged unsampled", kept)
	}
	tr.Start(ctx, ports.SpanGatewayCall, ports.SpanSubject{TraceParent: kept, Attempt: 1}).End(ports.SpanEnd{})
	unsampled := clientTrace[:53] + "00"
	tr.Start(ctx, ports.SpanSubmit, ports.SpanSubject{TraceParent: unsampled}).End(ports.SpanEnd{})
	if n := len(spans.GetSpans()); n != 0 {
		t.Fatalf("%d spans recorded of unsampled traces", n)
	}
	tr.Start(ctx, ports.SpanSubmit, ports.SpanSubject{TraceParent: clientTrace}).End(ports.SpanEnd{})
	if n := len(spans.GetSpans()); n != 1 {
		t.Errorf("%d spans recorded of the client's sampled trace, want 1", n)
	}
}

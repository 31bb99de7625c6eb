package e2e

import (
	"strconv"
	"strings"
	"testing"

	tracev1 "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
)

// What a traced intent must look like in a collector, as docs/operations.md
// ("Tracing") describes its spans, and at its gateway.

// The span names: one submit span per submission, and three spans per
// attempt.
const (
	spanSubmit      = "intent submit"
	spanReservation = "attempt reservation"
	spanGatewayCall = "gateway call"
	spanResult      = "attempt result"
)

var attemptSpanNames = []string{spanReservation, spanGatewayCall, spanResult}

// hasIntentSpans reports whether spans hold the submit span of intent id
// and the spans of its first attempts attempts.
func hasIntentSpans(id string, attempts int) func([]exportedSpan) bool {
	return func(spans []exportedSpan) bool {
		if len(spansOf(spans, id, spanSubmit, 0)) == 0 {
			return false
		}
		for n := 1; n <= attempts; n++ {
			for _, name := range attemptSpanNames {
				if len(spansOf(spans, id, name, n)) == 0 {
					return false
				}
			}
		}
		return true
	}
}

// hasAttemptSpans reports whether spans hold the first attempt's spans of
// every intent of ids.
func hasAttemptSpans(spans []exportedSpan, ids ...string) bool {
	for _, id := range ids {
		for _, name := range attemptSpanNames {
			if len(spansOf(spans, id, name, 1)) == 0 {
				return false
			}
		}
	}
	return true
}

// spansNamed returns the spans named name.
func spansNamed(spans []exportedSpan, name string) []exportedSpan {
	var out []exportedSpan
	for _, s := range spans {
		if s.name == name {
			out = append(out, s)
		}
	}
	return out
}

// spansOf returns the spans named name about intent id and, for an
// attempt's spans, its attempt number n (0 for a submit span).
func spansOf(spans []exportedSpan, id, name string, n int) []exportedSpan {
	var out []exportedSpan
	for _, s := range spans {
		number, numbered := s.attrs["submission.attempt"]
		if s.name == name && s.attrs["submission.intent_id"] == id && numbered == (n > 0) && (n == 0 || number == strconv.Itoa(n)) {
			out = append(out, s)
		}
	}
	return out
}

// checkIntentSpans checks the spans of intent id, submitted to
// sms.realtime and accepted at attempt number attempts after rejections
// with provider_failure: one submit span, a child of submitParent (the
// client's span, "" for a new trace), and for each attempt one
// reservation, gateway call and result span, children of the submit span;
// each of its documented kind with its documented attributes. It returns
// the submit span and the last gateway call span.
func checkIntentSpans(t *testing.T, spans []exportedSpan, id, submitParent string, attempts int) (submit, call exportedSpan) {
	t.Helper()
	one := func(name string, n int) exportedSpan {
		t.Helper()
		got := spansOf(spans, id, name, n)
		if len(got) != 1 {
			t.Fatalf("%d %q spans of intent %q (attempt %d), want one: %s", len(got), name, id, n, describeSpans(spans))
		}
		return got[0]
	}
	submit = one(spanSubmit, 0)
	if submit.parentID != submitParent {
		t.Errorf("the submit span's parent is %q, want %q", submit.parentID, submitParent)
	}
	checkSpan(t, submit, tracev1.Span_SPAN_KIND_SERVER, map[string]string{
		"submission.target": "sms.realtime", "submission.created": "1", "submission.intent.status": "pending",
	})
	for n := 1; n <= attempts; n++ {
		attempt := map[string]string{"submission.target": "sms.realtime", "submission.attempt": strconv.Itoa(n), "submission.gateway_type": "sms"}
		reservation, result := one(spanReservation, n), one(spanResult, n)
		call = one(spanGatewayCall, n)
		checkSpan(t, reservation, tracev1.Span_SPAN_KIND_INTERNAL, attempt)
		if n < attempts {
			checkSpan(t, call, tracev1.Span_SPAN_KIND_CLIENT, with(attempt,
				"submission.outcome.status", "rejected", "submission.outcome.reason", "provider_failure"))
			checkSpan(t, result, tracev1.Span_SPAN_KIND_INTERNAL, with(attempt, "submission.intent.status", "pending"))
		} else {
			checkSpan(t, call, tracev1.Span_SPAN_KIND_CLIENT, with(attempt, "submission.outcome.status", "accepted"))
			checkSpan(t, result, tracev1.Span_SPAN_KIND_INTERNAL, with(attempt, "submission.intent.status", "accepted"))
			if !strings.HasPrefix(call.attrs["submission.outcome.message_id"], "sim-sms-") {
				t.Errorf("the gateway call span's message id is %q, want the simulator's", call.attrs["submission.outcome.message_id"])
			}
		}
		for _, s := range []exportedSpan{reservation, call, result} {
			if s.parentID != submit.spanID {
				t.Errorf("attempt %d: the %s span's parent is %q, want the submit span %q", n, s.name, s.parentID, submit.spanID)
			}
		}
	}
	return submit, call
}

// checkSpan checks a span's kind, that it did not fail, and its attributes.
func checkSpan(t *testing.T, s exportedSpan, kind tracev1.Span_SpanKind, attrs map[string]string) {
	t.Helper()
	if s.kind != kind {
		t.Errorf("the %s span is of kind %s, want %s", s.name, s.kind, kind)
	}
	if s.failed {
		t.Errorf("the %s span failed: %v", s.name, s.attrs)
	}
	for k, v := range attrs {
		if got, ok := s.attrs[k]; !ok || got != v {
			t.Errorf("the %s span's %s is %q (present %v), want %q", s.name, k, got, ok, v)
		}
	}
}

// with returns attrs with more attributes, given as key, value pairs.
func with(attrs map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(attrs)+len(kv)/2)
	for k, v := range attrs {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// checkGatewayTraceParent checks the traceparent of the latest call the
// gateway received for intent id: in trace traceID, under span parentID.
func checkGatewayTraceParent(t *testing.T, sim *gatewaysim.Simulator, id, traceID, parentID, flags string) {
	t.Helper()
	if got, want := sim.Reference(id).LastTraceParent, traceParent(traceID, parentID, flags); got != want {
		t.Errorf("the gateway received traceparent %q, want %q (trace %s under the gateway call span)", got, want, traceID)
	}
}

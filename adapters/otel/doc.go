// Package otel implements ports.Tracer with the OpenTelemetry Go SDK: the
// spans of an intent's life (submit, reservation, gateway call, result)
// become OpenTelemetry spans, each a child of the trace context the intent
// keeps, and New exports them over OTLP/HTTP to a collector. The service
// builds this tracer only when the operator names an OTLP endpoint; without
// one it runs ports.NopTracer and no part of the SDK.
//
// Sampling follows the submitting trace: a span under a traceparent is
// sampled when the traceparent says so (parent-based), and only the roots
// (a submission that came without a traceparent) are sampled at the
// configured ratio. So an intent's attempts are recorded exactly when its
// submission was, on whichever instance they run.
package otel

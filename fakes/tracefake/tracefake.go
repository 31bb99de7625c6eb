// Package tracefake is a ports.Tracer for unit tests: it records every
// span it starts, with its kind, subject and ends, so that a test can say
// which spans an intent's life made and under which trace context, without
// an OpenTelemetry SDK.
package tracefake

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/submissionmanager/submission-manager/ports"
)

// NewTrace is the trace-id of the spans started without a parent.
const NewTrace = "11111111111111111111111111111111"

// Tracer records the spans started through it. Each span's own trace
// context has its parent's trace-id and flags (NewTrace, sampled, without
// a parent) and a span id counting from 1. It is safe for concurrent use.
type Tracer struct {
	mu    sync.Mutex
	spans []*Span
}

var _ ports.Tracer = (*Tracer)(nil)

// Span is one recorded span.
type Span struct {
	Kind    ports.SpanKind
	Subject ports.SpanSubject
	// Own is the span's trace context (Span.TraceParent).
	Own  string
	ends []ports.SpanEnd
	mu   *sync.Mutex
}

// Start records a span of kind about subject.
func (t *Tracer) Start(_ context.Context, kind ports.SpanKind, subject ports.SpanSubject) ports.Span {
	t.mu.Lock()
	defer t.mu.Unlock()
	traceID, flags := NewTrace, "01"
	if p := subject.TraceParent; len(p) == 55 {
		traceID, flags = p[3:35], p[53:]
	}
	s := &Span{Kind: kind, Subject: subject, mu: &t.mu,
		Own: fmt.Sprintf("00-%s-%016x-%s", traceID, len(t.spans)+1, flags)}
	t.spans = append(t.spans, s)
	return ports.NewSpan(recorder{s})
}

// Spans returns the spans recorded so far, in the order they started.
func (t *Tracer) Spans() []*Span {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.spans)
}

// Reset forgets the spans recorded so far.
func (t *Tracer) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.spans = nil
}

// Ends returns how the span was ended, once per End call: a span ended
// exactly once has one.
func (s *Span) Ends() []ports.SpanEnd {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ends)
}

// recorder is a span's ports.SpanRecorder side.
type recorder struct{ s *Span }

func (r recorder) TraceParent() string { return r.s.Own }

func (r recorder) End(e ports.SpanEnd) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.s.ends = append(r.s.ends, e)
}

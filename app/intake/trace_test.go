package intake_test

import (
	"context"
	"sync"
	"testing"

	"github.com/submissionmanager/submission-manager/app/intake"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/fakes/tracefake"
	"github.com/submissionmanager/submission-manager/ports"
)

// clientTrace is the traceparent a client sends with its request.
const clientTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// only returns the one span tracer recorded, failing otherwise, checks it
// was ended exactly once, and forgets it.
func only(t *testing.T, tracer *tracefake.Tracer) (*tracefake.Span, ports.SpanEnd) {
	t.Helper()
	spans := tracer.Spans()
	tracer.Reset()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	ends := spans[0].Ends()
	if len(ends) != 1 {
		t.Fatalf("the span was ended %d times, want once", len(ends))
	}
	return spans[0], ends[0]
}

func newTracedService(t *testing.T, tracer ports.Tracer) (*intake.Service, *memstore.Store, *tracedNotifications) {
	t.Helper()
	clk := clocktest.New(t0)
	store := memstore.New(clk)
	reg, err := core.NewRegistry([]core.Contract{smsDeadline, pushBatch})
	if err != nil {
		t.Fatal(err)
	}
	n := &tracedNotifications{}
	svc, err := intake.NewService(intake.ServiceConfig{Registry: reg, Store: store, Clock: clk, Notifier: n, Tracer: tracer})
	if err != nil {
		t.Fatal(err)
	}
	return svc, store, n
}

// tracedNotifications records the trace context of every intent the
// executor is told about: the executor's spans and gateway calls read it.
type tracedNotifications struct {
	mu     sync.Mutex
	traces map[string]string
}

func (n *tracedNotifications) Notify(i core.Intent) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.traces == nil {
		n.traces = map[string]string{}
	}
	n.traces[i.IntentID] = i.TraceParent
}

func (n *tracedNotifications) of(id string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.traces[id]
}

func traced(id, target, tp string) ports.SubmitIntentParams {
	p := item(id, target, `{"to":"1"}`)
	p.TraceParent = tp
	return p
}

// TestUntracedServiceKeepsTheClientsTraceParent: with tracing off, an
// intent keeps the traceparent its submission came with (in version-00
// form), a malformed one is ignored without refusing the submission, and a
// repeat in another trace is still a repeat that changes nothing.
func TestUntracedServiceKeepsTheClientsTraceParent(t *testing.T) {
	svc, store, n := newTracedService(t, nil)
	ctx := t.Context()
	for _, c := range []struct{ id, sent, kept string }{
		{"kept", clientTrace, clientTrace},
		{"later-version", "01" + clientTrace[2:] + "-extra", clientTrace},
		{"none", "", ""},
		{"upper-case", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01", ""},
		{"garbage", "hello", ""},
	} {
		res, err := svc.SubmitIntent(ctx, traced(c.id, "sms.realtime", c.sent))
		if err != nil || !res.Created {
			t.Fatalf("%s: SubmitIntent = created %v, %v; a traceparent never refuses a submission", c.id, res.Created, err)
		}
		stored, err := store.GetIntent(ctx, c.id)
		if err != nil || stored.TraceParent != c.kept || res.Intent.TraceParent != c.kept || n.of(c.id) != c.kept {
			t.Errorf("%s: sent %q; stored %q, answered %q, notified %q; want %q",
				c.id, c.sent, stored.TraceParent, res.Intent.TraceParent, n.of(c.id), c.kept)
		}
	}
	repeat, err := svc.SubmitIntent(ctx, traced("kept", "sms.realtime", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"))
	if err != nil || repeat.Created || repeat.Intent.TraceParent != clientTrace {
		t.Errorf("a repeat in another trace: created %v, TraceParent %q, %v; want the stored intent, unchanged", repeat.Created, repeat.Intent.TraceParent, err)
	}
}

// TestSubmitSpan: a submission is one span under the client's
// traceparent; the intent keeps the span's own context, which is what the
// executor learns; a refusal ends the span as an answer, a store failure
// as a failure.
func TestSubmitSpan(t *testing.T) {
	spans := &tracefake.Tracer{}
	svc, store, n := newTracedService(t, spans)
	ctx := t.Context()

	res, err := svc.SubmitIntent(ctx, traced("a", "sms.realtime", clientTrace))
	if err != nil {
		t.Fatal(err)
	}
	span, end := only(t, spans)
	if span.Kind != ports.SpanSubmit || span.Subject.TraceParent != clientTrace || span.Subject.IntentID != "a" || span.Subject.SubmissionTarget != "sms.realtime" {
		t.Errorf("span %v %+v, want a submit span under the client's traceparent", span.Kind, span.Subject)
	}
	stored, _ := store.GetIntent(ctx, "a")
	if res.Intent.TraceParent != span.Own || stored.TraceParent != span.Own || n.of("a") != span.Own {
		t.Errorf("the intent keeps %q (stored %q, notified %q), want the submit span's %q", res.Intent.TraceParent, stored.TraceParent, n.of("a"), span.Own)
	}
	if end.Err != nil || end.Created != 1 || end.Status != core.StatusPending {
		t.Errorf("span end %+v, want one created pending intent", end)
	}

	if _, err := svc.SubmitIntent(ctx, traced("b", "no.such.target", clientTrace)); err == nil {
		t.Fatal("an unknown target was accepted")
	}
	if _, end := only(t, spans); end.Err == nil || !end.Refused || end.Created != 0 {
		t.Errorf("refused submission's span end %+v, want the refusal marked as one", end)
	}

	if _, err := svc.SubmitIntent(ctx, traced("a", "sms.realtime", "")); err != nil {
		t.Fatal(err)
	}
	if _, end := only(t, spans); end.Err != nil || end.Created != 0 {
		t.Errorf("repeat's span end %+v, want nothing created", end)
	}

	failing, _, _ := newTracedService(t, spans)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := failing.SubmitIntent(cancelled, traced("c", "sms.realtime", "")); err == nil {
		t.Fatal("a submission with a cancelled context was stored")
	}
	if _, end := only(t, spans); end.Err == nil || end.Refused {
		t.Errorf("failed submission's span end %+v, want a failure", end)
	}
}

// TestBatchSpan: a batch is one span under the batch's traceparent, and
// every intent it creates keeps that span's context; its end counts what
// was created and refused.
func TestBatchSpan(t *testing.T) {
	spans := &tracefake.Tracer{}
	svc, store, _ := newTracedService(t, spans)
	ctx := t.Context()
	out, err := svc.SubmitIntents(ctx, []ports.SubmitIntentParams{
		traced("b-1", "sms.realtime", clientTrace),
		traced("b-2", "push.batch", clientTrace),
		traced("b-3", "no.such.target", clientTrace),
	})
	if err != nil {
		t.Fatal(err)
	}
	span, end := only(t, spans)
	if span.Kind != ports.SpanSubmit || span.Subject.TraceParent != clientTrace || span.Subject.Items != 3 {
		t.Errorf("batch span %v %+v, want one submit span of 3 items under the client's traceparent", span.Kind, span.Subject)
	}
	if end.Created != 2 || end.RefusedItems != 1 || end.Err != nil {
		t.Errorf("batch span end %+v, want 2 created and 1 refused", end)
	}
	for i, id := range []string{"b-1", "b-2"} {
		stored, _ := store.GetIntent(ctx, id)
		if out[i].Result.Intent.TraceParent != span.Own || stored.TraceParent != span.Own {
			t.Errorf("%s keeps %q (stored %q), want the batch span's %q", id, out[i].Result.Intent.TraceParent, stored.TraceParent, span.Own)
		}
	}
}

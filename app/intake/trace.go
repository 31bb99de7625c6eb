package intake

import (
	"context"
	"errors"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// A submission's trace. The traceparent a client sends is read as the W3C
// specification says (core.NormalizeTraceParent): a malformed one is
// ignored, never a reason to refuse the submission. The submission's span
// is its child, and the intent keeps the span's trace context, so that
// the spans of its attempts and every gateway call of it join the trace
// the client submitted in. With tracing off (ports.NopTracer) the span
// records nothing and the intent keeps the client's traceparent as sent.

// startSubmit starts the span of one submission.
func (s *Service) startSubmit(ctx context.Context, p ports.SubmitIntentParams) ports.Span {
	parent, _ := core.NormalizeTraceParent(p.TraceParent)
	return s.cfg.Tracer.Start(ctx, ports.SpanSubmit, ports.SpanSubject{
		TraceParent: parent, IntentID: p.IntentID, SubmissionTarget: p.SubmissionTarget,
	})
}

// startBatch starts the one span of a batch, under the first item's
// traceparent (every item of an HTTP batch carries the request's), and
// returns it with that parent.
func (s *Service) startBatch(ctx context.Context, items []ports.SubmitIntentParams) (ports.Span, string) {
	var parent string
	if len(items) > 0 {
		parent, _ = core.NormalizeTraceParent(items[0].TraceParent)
	}
	return s.cfg.Tracer.Start(ctx, ports.SpanSubmit, ports.SpanSubject{TraceParent: parent, Items: len(items)}), parent
}

// batchTrace decides the trace context each intent of a batch keeps.
type batchTrace struct {
	// parent is the batch span's parent; span is the span's own context.
	parent, span string
}

// of is the trace context item's intent keeps: the batch span's for an
// item sent in the batch's trace, and the item's own otherwise (a caller
// other than the HTTP API may mix traces in one batch).
func (b batchTrace) of(item ports.SubmitIntentParams) string {
	own, _ := core.NormalizeTraceParent(item.TraceParent)
	if own == b.parent {
		return b.span
	}
	return own
}

// submitEnd is how a single submission ended, for its span.
func submitEnd(res ports.SubmitIntentResult, err error) ports.SpanEnd {
	if err != nil {
		return ports.SpanEnd{Err: err, Refused: refusal(err)}
	}
	e := ports.SpanEnd{Status: res.Intent.Status}
	if res.Created {
		e.Created = 1
	}
	return e
}

// batchEnd is how a batch ended, for its span: the intents it created and
// the items it refused, or the failure that stored none of it.
func batchEnd(out []ports.SubmitIntentsItem, err error) ports.SpanEnd {
	if err != nil {
		return ports.SpanEnd{Err: err, Refused: refusal(err)}
	}
	var e ports.SpanEnd
	for _, item := range out {
		switch {
		case item.Err != nil:
			e.RefusedItems++
		case item.Result.Created:
			e.Created++
		}
	}
	return e
}

// refusal reports whether err refuses what the client sent (the API
// answers it with a 4xx) rather than being a failure of the service.
func refusal(err error) bool {
	var field *core.FieldError
	var conflict *core.IdempotencyConflictError
	return errors.As(err, &field) || errors.As(err, &conflict) ||
		errors.Is(err, core.ErrUnknownTarget) || errors.Is(err, core.ErrPayloadTooLarge)
}

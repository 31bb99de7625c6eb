package intake

import (
	"context"
	"errors"
	"fmt"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// SubmitIntents judges every item exactly as SubmitIntent would judge it
// alone, in order, and stores all the new intents with one store call, so a
// batch costs the store one commit (or as few as it allows) instead of one
// per item. An item that repeats an earlier item's intentId is judged
// against that item's answer, as if the items had been sent one by one.
//
// Every store read happens before the one write and the write either
// stores every new intent of the batch or none, so the batch's own error
// (the store failing) always means that nothing of it was stored.
//
// The batch has one span (trace.go), and every intent it creates keeps the
// span's trace context.
func (s *Service) SubmitIntents(ctx context.Context, items []ports.SubmitIntentParams) ([]ports.SubmitIntentsItem, error) {
	span, parent := s.startBatch(ctx, items)
	out, err := s.submitIntents(ctx, items, batchTrace{parent: parent, span: span.TraceParent()})
	span.End(batchEnd(out, err))
	return out, err
}

// submitIntents is SubmitIntents within its span.
func (s *Service) submitIntents(ctx context.Context, items []ports.SubmitIntentParams, trace batchTrace) ([]ports.SubmitIntentsItem, error) {
	switch {
	case len(items) == 0:
		return nil, &core.FieldError{Field: "intents", Message: "must hold at least one intent"}
	case len(items) > s.cfg.MaxBatch:
		return nil, &core.FieldError{Field: "intents",
			Message: fmt.Sprintf("holds %d intents, the limit is %d", len(items), s.cfg.MaxBatch)}
	}
	out := make([]ports.SubmitIntentsItem, len(items))
	subs := make([]prepared, len(items))
	var (
		toStore  []core.Intent
		storeIdx []int
		refused  []int
		// firstStored is the first item of each intentId sent to the store.
		firstStored = make(map[string]int, len(items))
	)
	for i, p := range items {
		if p.Refused != nil {
			out[i].Err = p.Refused
			continue
		}
		sub, err := s.prepare(p)
		if err != nil {
			out[i].Err = err
			continue
		}
		sub.intent.TraceParent = trace.of(p)
		subs[i] = sub
		if sub.refusal != nil {
			refused = append(refused, i)
			continue
		}
		if _, ok := firstStored[p.IntentID]; !ok {
			firstStored[p.IntentID] = i
		}
		toStore = append(toStore, sub.intent)
		storeIdx = append(storeIdx, i)
	}
	// A refused item still answers a repeat of the intent stored under its
	// id before the batch (see repeatOr); read those before writing.
	before := make(map[string]*core.Intent, len(refused))
	for _, i := range refused {
		id := items[i].IntentID
		if _, done := before[id]; done {
			continue
		}
		existing, err := s.cfg.Store.GetIntent(ctx, id)
		switch {
		case errors.Is(err, core.ErrIntentNotFound):
			before[id] = nil
		case err != nil:
			return nil, err
		default:
			before[id] = &existing
		}
	}
	if len(toStore) > 0 {
		results, err := s.cfg.Store.CreateIntents(ctx, toStore)
		if err != nil {
			return nil, err
		}
		if len(results) != len(toStore) {
			return nil, fmt.Errorf("%w: the store answered %d of %d intents", core.ErrStoreUnavailable, len(results), len(toStore))
		}
		for k, i := range storeIdx {
			out[i].Result, out[i].Err = s.judge(subs[i], results[k])
		}
	}
	for _, i := range refused {
		existing := before[items[i].IntentID]
		if j, ok := firstStored[items[i].IntentID]; ok && j < i && out[j].Err == nil {
			// An earlier item of this batch holds the intentId now.
			existing = &out[j].Result.Intent
		}
		out[i].Result, out[i].Err = repeatOf(existing, subs[i])
	}
	return out, nil
}

// repeatOf answers a submission the current configuration refuses, given
// the intent stored under its id (nil when there is none): the stored
// intent when the submission repeats it, the conflict when it does not, and
// the refusal when the id is free.
func repeatOf(existing *core.Intent, sub prepared) (ports.SubmitIntentResult, error) {
	if existing == nil {
		return ports.SubmitIntentResult{}, sub.refusal
	}
	if err := core.CheckIdempotency(*existing, sub.submission); err != nil {
		return ports.SubmitIntentResult{}, err
	}
	return ports.SubmitIntentResult{Intent: *existing}, nil
}

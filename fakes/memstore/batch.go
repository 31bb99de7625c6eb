package memstore

import (
	"context"
	"fmt"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// CreateIntents inserts every intent whose intentId is free under one lock,
// as one transaction would, stamped with one store time; a taken intentId,
// or one taken by an earlier intent of the same call, yields the stored
// intent unjudged. It checks every intent before it stores any, so a call
// that fails stores nothing.
func (s *Store) CreateIntents(ctx context.Context, intents []core.Intent) ([]ports.CreateIntentResult, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	for _, in := range intents {
		if in.IntentID == "" || in.Status != core.StatusPending || len(in.Attempts) != 0 {
			return nil, fmt.Errorf("memstore: create intents: %q: a new intent is pending with no attempts", in.IntentID)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	out := make([]ports.CreateIntentResult, len(intents))
	created := false
	for i, in := range intents {
		if existing, ok := s.intents[in.IntentID]; ok {
			out[i] = ports.CreateIntentResult{Intent: cloneIntent(existing)}
			continue
		}
		stored := cloneIntent(&in)
		stored.AttemptCount = 0
		stored.LastModifiedAt = now
		s.intents[stored.IntentID] = &stored
		out[i] = ports.CreateIntentResult{Intent: cloneIntent(&stored), Created: true}
		created = true
	}
	if created {
		s.signal()
	}
	return out, nil
}

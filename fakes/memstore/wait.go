package memstore

import (
	"context"
	"fmt"

	"github.com/submissionmanager/submission-manager/core"
)

// WaitIntent blocks until the intent exists and cond holds for it, and
// returns that snapshot. It lets a test wait for the engine's asynchronous
// writes without sleeping; it is a test helper, not part of any port. It
// returns ctx's error, with the last state seen, if ctx ends first.
func (s *Store) WaitIntent(ctx context.Context, intentID string, cond func(core.Intent) bool) (core.Intent, error) {
	var last core.Intent
	for {
		s.mu.Lock()
		in, ok := s.intents[intentID]
		changed := s.changed
		if ok {
			last = cloneIntent(in)
		}
		s.mu.Unlock()
		if ok && cond(last) {
			return last, nil
		}
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("memstore: waiting for intent %q (last seen %s with %d attempts): %w",
				intentID, last.Status, last.AttemptCount, context.Cause(ctx))
		case <-changed:
		}
	}
}

package e2e

import (
	"context"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The operator's actions on pending intents (ports.InterventionStore)
// through a dbLink: refused while the link is cut, like every store call.

func (s linkStore) CancelIntent(ctx context.Context, p ports.IntentActionParams) (bool, error) {
	if err := s.l.check(); err != nil {
		return false, err
	}
	return s.l.store.CancelIntent(ctx, p)
}

func (s linkStore) RunIntentNow(ctx context.Context, p ports.IntentActionParams) (bool, error) {
	if err := s.l.check(); err != nil {
		return false, err
	}
	return s.l.store.RunIntentNow(ctx, p)
}

func (s linkStore) IntentEvents(ctx context.Context, intentID string) ([]core.IntentEvent, error) {
	if err := s.l.check(); err != nil {
		return nil, err
	}
	return s.l.store.IntentEvents(ctx, intentID)
}

package e2e

import (
	"context"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The operator methods of ports.Store through a dbLink.

func (s linkStore) CreateResubmission(ctx context.Context, in core.Intent) (ports.CreateIntentResult, error) {
	if err := s.l.check(); err != nil {
		return ports.CreateIntentResult{}, err
	}
	return s.l.store.CreateResubmission(ctx, in)
}

func (s linkStore) ResubmissionLinks(ctx context.Context, ids []string) (map[string]ports.ResubmissionLinks, error) {
	if err := s.l.check(); err != nil {
		return nil, err
	}
	return s.l.store.ResubmissionLinks(ctx, ids)
}

func (s linkStore) CountIntents(ctx context.Context) ([]ports.IntentCount, error) {
	if err := s.l.check(); err != nil {
		return nil, err
	}
	return s.l.store.CountIntents(ctx)
}

package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// CreateResubmission stores the resubmission and both links under one lock,
// as the SQL stores do in one transaction.
func (s *Store) CreateResubmission(ctx context.Context, intent core.Intent) (ports.CreateIntentResult, error) {
	if err := ctxErr(ctx); err != nil {
		return ports.CreateIntentResult{}, err
	}
	from := intent.ResubmittedFrom
	if from == "" || intent.IntentID == "" || intent.Status != core.StatusPending || len(intent.Attempts) != 0 {
		return ports.CreateIntentResult{}, fmt.Errorf("memstore: create resubmission %q: a resubmission is pending, has no attempts and names its original", intent.IntentID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	original, ok := s.intents[from]
	if !ok {
		return ports.CreateIntentResult{}, fmt.Errorf("%w: %q", core.ErrIntentNotFound, from)
	}
	if as := s.links[from].As; as != "" {
		return ports.CreateIntentResult{Intent: cloneIntent(s.intents[as])}, nil
	}
	if !original.Status.Terminal() {
		return ports.CreateIntentResult{}, fmt.Errorf("%w: %q is %s", core.ErrIntentNotEnded, from, original.Status)
	}
	if _, taken := s.intents[intent.IntentID]; taken {
		return ports.CreateIntentResult{}, fmt.Errorf("%w: %q", core.ErrResubmissionIDTaken, intent.IntentID)
	}
	stored := cloneIntent(&intent)
	stored.ResubmittedFrom, stored.ResubmittedAs = "", ""
	stored.AttemptCount = 0
	stored.LastModifiedAt = s.clock.Now()
	s.intents[stored.IntentID] = &stored
	if s.links == nil {
		s.links = make(map[string]ports.ResubmissionLinks)
	}
	l := s.links[from]
	l.As = stored.IntentID
	s.links[from] = l
	l = s.links[stored.IntentID]
	l.From = from
	s.links[stored.IntentID] = l
	s.signal()
	return ports.CreateIntentResult{Intent: cloneIntent(&stored), Created: true}, nil
}

// ResubmissionLinks returns the links of the given intents that have any.
func (s *Store) ResubmissionLinks(ctx context.Context, intentIDs []string) (map[string]ports.ResubmissionLinks, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]ports.ResubmissionLinks)
	for _, id := range intentIDs {
		if l, ok := s.links[id]; ok {
			out[id] = l
		}
	}
	return out, nil
}

// CountIntents counts intents per target and status.
func (s *Store) CountIntents(ctx context.Context) ([]ports.IntentCount, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	type key struct {
		target string
		status core.IntentStatus
	}
	counts := make(map[key]int64)
	for _, in := range s.intents {
		counts[key{in.SubmissionTarget, in.Status}]++
	}
	out := make([]ports.IntentCount, 0, len(counts))
	for k, n := range counts {
		out = append(out, ports.IntentCount{SubmissionTarget: k.target, Status: k.status, Count: n})
	}
	slices.SortFunc(out, func(a, b ports.IntentCount) int {
		return cmp.Or(cmp.Compare(a.SubmissionTarget, b.SubmissionTarget), cmp.Compare(a.Status, b.Status))
	})
	return out, nil
}

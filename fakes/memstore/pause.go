package memstore

import (
	"cmp"
	"context"
	"slices"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.PauseStore = (*Store)(nil)

// pauseKey separates type pauses from URL pauses in one map.
func pauseKey(t core.GatewayType, gatewayURL string) string {
	if gatewayURL != "" {
		return "url:" + gatewayURL
	}
	return "type:" + string(t)
}

// ListPauses returns the pauses, type pauses first. See ports.PauseStore.
func (s *Store) ListPauses(ctx context.Context) ([]core.GatewayPause, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]core.GatewayPause, 0, len(s.pauses))
	for _, p := range s.pauses {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b core.GatewayPause) int {
		return cmp.Compare(pauseKey(a.GatewayType, a.GatewayURL), pauseKey(b.GatewayType, b.GatewayURL))
	})
	// "type:" sorts after "url:"; type pauses come first.
	slices.SortStableFunc(out, func(a, b core.GatewayPause) int {
		return cmp.Compare(btoi(a.GatewayURL != ""), btoi(b.GatewayURL != ""))
	})
	return out, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// PauseGateway stores a pause idempotently. See ports.PauseStore.
func (s *Store) PauseGateway(ctx context.Context, p core.GatewayPause) (core.GatewayPause, error) {
	if err := ctxErr(ctx); err != nil {
		return core.GatewayPause{}, err
	}
	if err := core.ValidateGatewaySelector(p.GatewayType, p.GatewayURL); err != nil {
		return core.GatewayPause{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pauses == nil {
		s.pauses = map[string]core.GatewayPause{}
	}
	k := pauseKey(p.GatewayType, p.GatewayURL)
	if old, ok := s.pauses[k]; ok {
		return old, nil
	}
	p.PausedAt = s.clock.Now()
	s.pauses[k] = p
	s.signal()
	return p, nil
}

// ResumeGateway removes a pause. See ports.PauseStore.
func (s *Store) ResumeGateway(ctx context.Context, t core.GatewayType, gatewayURL string) (bool, error) {
	if err := ctxErr(ctx); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := pauseKey(t, gatewayURL)
	_, ok := s.pauses[k]
	delete(s.pauses, k)
	if ok {
		s.signal()
	}
	return ok, nil
}

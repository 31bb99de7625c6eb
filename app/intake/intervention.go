package intake

import (
	"context"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// CancelIntent ends a pending intent as exhausted, cancelled, through the
// store's one conditional write, which refuses while an attempt is in
// flight (core.ErrAttemptInFlight) so that the executor's reservation and
// the cancel never both apply. A repeat returns the cancelled intent. The
// answer is the intent as read after the write, with its links and events.
func (s *Service) CancelIntent(ctx context.Context, p ports.IntentActionParams) (ports.IntentActionResult, error) {
	applied, err := s.cfg.Store.CancelIntent(ctx, p)
	if err != nil {
		return ports.IntentActionResult{}, err
	}
	in, err := s.GetIntent(ctx, p.IntentID)
	if err != nil {
		return ports.IntentActionResult{}, err
	}
	if applied {
		s.cfg.Metrics.IntentCompleted(in.SubmissionTarget, core.StatusExhausted, string(core.ExhaustedCancelled))
	}
	return ports.IntentActionResult{Intent: in, Applied: applied}, nil
}

// RunNow makes a pending intent's next try due now. It changes nothing
// else: the leader's refresh reads the new due time (the write moves the
// intent's change marker) and schedules the intent as any other, so the
// gateway's breaker, the call limits and a pause still hold it. An intent
// already due is returned as it is.
func (s *Service) RunNow(ctx context.Context, p ports.IntentActionParams) (ports.IntentActionResult, error) {
	applied, err := s.cfg.Store.RunIntentNow(ctx, p)
	if err != nil {
		return ports.IntentActionResult{}, err
	}
	in, err := s.GetIntent(ctx, p.IntentID)
	if err != nil {
		return ports.IntentActionResult{}, err
	}
	return ports.IntentActionResult{Intent: in, Applied: applied}, nil
}

// withEvents fills one intent's operator events from the store.
func (s *Service) withEvents(ctx context.Context, in core.Intent) (core.Intent, error) {
	events, err := s.cfg.Store.IntentEvents(ctx, in.IntentID)
	if err != nil {
		return core.Intent{}, err
	}
	in.Events = events
	return in, nil
}

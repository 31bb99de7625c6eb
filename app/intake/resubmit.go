package intake

import (
	"context"
	"fmt"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.OperatorService = (*Service)(nil)

// ResubmitIntent creates a new intent with the ended intent's target and
// payload under the registry's current contract, linked both ways to the
// original. It is idempotent per original: once an original has a
// resubmission, every later call returns that one (Created=false), whatever
// new intentId it asks for, so a retried or doubled click never sends twice.
// An original whose message the gateway may already have (core.DeliveryRisk)
// is resubmitted only when p acknowledges that risk; without it the call is
// refused with core.ErrDeliveryRisk, unless the original already has its
// resubmission, which is returned as always, since that sends nothing.
func (s *Service) ResubmitIntent(ctx context.Context, p ports.ResubmitIntentParams) (ports.SubmitIntentResult, error) {
	original, err := s.cfg.Store.GetIntent(ctx, p.IntentID)
	if err != nil {
		return ports.SubmitIntentResult{}, err
	}
	if !original.Status.Terminal() {
		return ports.SubmitIntentResult{}, fmt.Errorf("%w: %q is %s", core.ErrIntentNotEnded, p.IntentID, original.Status)
	}
	if err := s.unacknowledgedRisk(ctx, original, p.AcknowledgeDeliveryRisk); err != nil {
		return ports.SubmitIntentResult{}, err
	}
	newID := p.NewIntentID
	if newID == "" {
		newID = core.DeriveResubmissionID(original.IntentID)
	}
	if err := core.ValidateIntentID(newID); err != nil {
		return ports.SubmitIntentResult{}, err
	}
	contract, ok := s.cfg.Registry.Lookup(original.SubmissionTarget)
	if !ok {
		return ports.SubmitIntentResult{}, fmt.Errorf("%w: %q is no longer in the registry", core.ErrUnknownTarget, original.SubmissionTarget)
	}
	res, err := s.cfg.Store.CreateResubmission(ctx, core.NewResubmission(original, newID, contract, s.cfg.Clock.Now()))
	if err != nil {
		return ports.SubmitIntentResult{}, err
	}
	if res.Created {
		s.cfg.Metrics.IntentCreated(res.Intent.SubmissionTarget)
		if s.cfg.Notifier != nil {
			s.cfg.Notifier.Notify(res.Intent)
		}
	}
	intents, err := s.withLinks(ctx, []core.Intent{res.Intent})
	if err != nil {
		return ports.SubmitIntentResult{}, err
	}
	return ports.SubmitIntentResult{Intent: intents[0], Created: res.Created}, nil
}

// unacknowledgedRisk refuses the resubmission of an original whose message
// the gateway may already have, when the risk was not acknowledged and the
// original has no resubmission yet.
func (s *Service) unacknowledgedRisk(ctx context.Context, original core.Intent, acknowledged bool) error {
	risk := core.DeliveryRisk(original)
	if risk == nil || acknowledged {
		return nil
	}
	links, err := s.cfg.Store.ResubmissionLinks(ctx, []string{original.IntentID})
	if err != nil {
		return err
	}
	if links[original.IntentID].As != "" {
		return nil
	}
	return risk
}

// CountIntents returns the number of intents per target and status.
func (s *Service) CountIntents(ctx context.Context) ([]ports.IntentCount, error) {
	return s.cfg.Store.CountIntents(ctx)
}

// withLinks fills the intents' resubmission links from the store.
func (s *Service) withLinks(ctx context.Context, intents []core.Intent) ([]core.Intent, error) {
	if len(intents) == 0 {
		return intents, nil
	}
	ids := make([]string, len(intents))
	for i, in := range intents {
		ids[i] = in.IntentID
	}
	links, err := s.cfg.Store.ResubmissionLinks(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range intents {
		l := links[intents[i].IntentID]
		intents[i].ResubmittedFrom, intents[i].ResubmittedAs = l.From, l.As
	}
	return intents, nil
}

package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Notifier is told about every intent this instance creates, so that a
// local leader runs its first attempt at once. The Engine is one.
type Notifier interface {
	Notify(core.Intent)
}

// ServiceConfig wires a Service. Registry, Store and Clock are required.
type ServiceConfig struct {
	// Registry resolves a submissionTarget to the contract the intent keeps.
	Registry *core.Registry
	// Store creates intents race-safely and reads them back.
	Store ports.Store
	// Clock stamps an intent's creation, which starts its deadline.
	Clock ports.Clock
	// Metrics counts created intents; nil means none.
	Metrics ports.Metrics
	// MaxPayloadBytes limits the compacted payload; 0 means
	// core.DefaultMaxPayloadBytes.
	MaxPayloadBytes int
	// Notifier is the local engine; nil when this process never executes.
	Notifier Notifier
	// MaxNotBefore caps how far ahead a submission may schedule its first
	// attempt; 0 means core.DefaultMaxNotBefore.
	MaxNotBefore time.Duration
}

// Service implements ports.IntentService: it is what the HTTP API calls.
type Service struct {
	cfg ServiceConfig
}

var _ ports.IntentService = (*Service)(nil)

// NewService validates cfg and applies the defaults.
func NewService(cfg ServiceConfig) (*Service, error) {
	var errs []error
	if cfg.Registry == nil {
		errs = append(errs, errors.New("engine: ServiceConfig.Registry is required"))
	}
	if cfg.Store == nil {
		errs = append(errs, errors.New("engine: ServiceConfig.Store is required"))
	}
	if cfg.Clock == nil {
		errs = append(errs, errors.New("engine: ServiceConfig.Clock is required"))
	}
	if cfg.MaxPayloadBytes < 0 {
		errs = append(errs, errors.New("engine: ServiceConfig.MaxPayloadBytes must not be negative"))
	}
	if cfg.MaxNotBefore < 0 {
		errs = append(errs, errors.New("engine: ServiceConfig.MaxNotBefore must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	cfg.MaxPayloadBytes = cmp.Or(cfg.MaxPayloadBytes, core.DefaultMaxPayloadBytes)
	cfg.MaxNotBefore = cmp.Or(cfg.MaxNotBefore, core.DefaultMaxNotBefore)
	cfg.Metrics = cmp.Or[ports.Metrics](cfg.Metrics, ports.NopMetrics{})
	return &Service{cfg: cfg}, nil
}

// SubmitIntent validates the submission, snapshots its target's contract and
// stores the intent with its first attempt due at once (or at notBefore). A
// repeat of an existing intent (same target, same payload in canonical form,
// same notBefore) returns it with Created=false and starts nothing; any other
// reuse of the intentId is a *core.IdempotencyConflictError.
func (s *Service) SubmitIntent(ctx context.Context, p ports.SubmitIntentParams) (ports.SubmitIntentResult, error) {
	if err := core.ValidateIntentID(p.IntentID); err != nil {
		return ports.SubmitIntentResult{}, err
	}
	if p.SubmissionTarget == "" {
		return ports.SubmitIntentResult{}, &core.FieldError{Field: "submissionTarget", Message: "is required"}
	}
	payload, err := core.CompactPayload(p.Payload)
	if err != nil {
		return ports.SubmitIntentResult{}, err
	}
	// A payload that repeats a member name has no single meaning to compare
	// or forward. (The canonical form itself is computed only when a repeat
	// is judged, from the stored bytes.)
	if err := core.CheckMemberNames(payload); err != nil {
		return ports.SubmitIntentResult{}, err
	}
	// Every store keeps times to the microsecond; notBefore is kept at that
	// precision so that a repeat compares equal to what was stored.
	notBefore := p.NotBefore.Truncate(time.Microsecond).UTC()
	if p.NotBefore.IsZero() {
		notBefore = time.Time{}
	}
	sub := core.Submission{SubmissionTarget: p.SubmissionTarget, Payload: payload, NotBefore: notBefore}
	now := s.cfg.Clock.Now()
	if err := core.CheckNotBefore(notBefore, now, s.cfg.MaxNotBefore); err != nil {
		return s.repeatOr(ctx, p.IntentID, sub, err)
	}
	if len(payload) > s.cfg.MaxPayloadBytes {
		return s.repeatOr(ctx, p.IntentID, sub, fmt.Errorf("%w: %d bytes compacted, the limit is %d",
			core.ErrPayloadTooLarge, len(payload), s.cfg.MaxPayloadBytes))
	}
	contract, ok := s.cfg.Registry.Lookup(p.SubmissionTarget)
	if !ok {
		return s.repeatOr(ctx, p.IntentID, sub,
			fmt.Errorf("%w: %q", core.ErrUnknownTarget, p.SubmissionTarget))
	}
	intent := core.NewIntent(p.IntentID, contract, payload, now).WithNotBefore(notBefore)
	created, err := s.cfg.Store.CreateIntent(ctx, intent)
	if err != nil {
		return ports.SubmitIntentResult{}, err
	}
	if !created.Created {
		// The one place a repeat is judged: the store only reports what it holds.
		if err := core.CheckIdempotency(created.Intent, sub); err != nil {
			return ports.SubmitIntentResult{}, err
		}
	}
	if created.Created {
		s.cfg.Metrics.IntentCreated(created.Intent.SubmissionTarget)
		if s.cfg.Notifier != nil {
			s.cfg.Notifier.Notify(created.Intent)
		}
	}
	return ports.SubmitIntentResult{Intent: created.Intent, Created: created.Created}, nil
}

// repeatOr answers a submission the current configuration would refuse (its
// target left the registry, or the payload limit was lowered) when it
// repeats an intent stored before the change: a client retrying a request
// that was accepted must get the existing intent, not an error. Anything
// else gets refusal, or the idempotency conflict if the id is taken.
func (s *Service) repeatOr(ctx context.Context, intentID string, sub core.Submission, refusal error) (ports.SubmitIntentResult, error) {
	existing, err := s.cfg.Store.GetIntent(ctx, intentID)
	switch {
	case errors.Is(err, core.ErrIntentNotFound):
		return ports.SubmitIntentResult{}, refusal
	case err != nil:
		return ports.SubmitIntentResult{}, err
	}
	if err := core.CheckIdempotency(existing, sub); err != nil {
		return ports.SubmitIntentResult{}, err
	}
	return ports.SubmitIntentResult{Intent: existing}, nil
}

// GetIntent returns one intent with its attempts, or core.ErrIntentNotFound.
func (s *Service) GetIntent(ctx context.Context, intentID string) (core.Intent, error) {
	in, err := s.cfg.Store.GetIntent(ctx, intentID)
	if err != nil {
		return core.Intent{}, err
	}
	linked, err := s.withLinks(ctx, []core.Intent{in})
	if err != nil {
		return core.Intent{}, err
	}
	return linked[0], nil
}

// ListIntents returns a page of intents, newest first, after checking the
// filters so a typo is a field error rather than an empty page.
func (s *Service) ListIntents(ctx context.Context, p ports.ListIntentsParams) (ports.IntentPage, error) {
	if p.Limit < 1 {
		return ports.IntentPage{}, &core.FieldError{Field: "limit", Message: "must be at least 1"}
	}
	if p.Status != "" && !p.Status.Valid() {
		return ports.IntentPage{}, &core.FieldError{Field: "status", Message: fmt.Sprintf("%q is not an intent status", p.Status)}
	}
	// The store answers one query shape; asking for one row more than the
	// page tells whether a next page exists without a count.
	pageSize := p.Limit
	p.Limit++
	intents, err := s.cfg.Store.ListIntents(ctx, p)
	if err != nil {
		return ports.IntentPage{}, err
	}
	page := ports.IntentPage{Intents: intents}
	if len(intents) > pageSize {
		page.Intents = intents[:pageSize]
		last := page.Intents[pageSize-1]
		page.Next = &ports.IntentPosition{CreatedAt: last.CreatedAt, IntentID: last.IntentID}
	}
	if page.Intents, err = s.withLinks(ctx, page.Intents); err != nil {
		return ports.IntentPage{}, err
	}
	return page, nil
}

// Targets returns every contract of the registry, ordered by target.
func (s *Service) Targets() []core.Contract { return s.cfg.Registry.Contracts() }

// Target returns one contract or core.ErrUnknownTarget.
func (s *Service) Target(submissionTarget string) (core.Contract, error) {
	c, ok := s.cfg.Registry.Lookup(submissionTarget)
	if !ok {
		return core.Contract{}, fmt.Errorf("%w: %q", core.ErrUnknownTarget, submissionTarget)
	}
	return c, nil
}

// Package intake is the application service behind the API: it validates a
// submission, snapshots its target's contract and stores the intent
// (idempotently, one intent or a batch), reads intents back, and creates the
// resubmission of an ended intent for an operator. It never executes an
// attempt: the executor (app/executor) learns of new intents through the
// Notifier, or from the store.
package intake

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
// local leader runs its first attempt at once. The executor is one; intake
// never refers to it otherwise.
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
	// Notifier is the local executor; nil when this process never executes.
	Notifier Notifier
	// MaxNotBefore caps how far ahead a submission may schedule its first
	// attempt; 0 means core.DefaultMaxNotBefore.
	MaxNotBefore time.Duration
	// MaxBatch caps the intents of one batch submission; 0 means
	// ports.DefaultMaxBatch.
	MaxBatch int
	// Tracer makes each submission's span (trace.go); nil means
	// ports.NopTracer, which keeps the traceparent a submission came with.
	Tracer ports.Tracer
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
		errs = append(errs, errors.New("intake: ServiceConfig.Registry is required"))
	}
	if cfg.Store == nil {
		errs = append(errs, errors.New("intake: ServiceConfig.Store is required"))
	}
	if cfg.Clock == nil {
		errs = append(errs, errors.New("intake: ServiceConfig.Clock is required"))
	}
	if cfg.MaxPayloadBytes < 0 {
		errs = append(errs, errors.New("intake: ServiceConfig.MaxPayloadBytes must not be negative"))
	}
	if cfg.MaxNotBefore < 0 {
		errs = append(errs, errors.New("intake: ServiceConfig.MaxNotBefore must not be negative"))
	}
	if cfg.MaxBatch < 0 {
		errs = append(errs, errors.New("intake: ServiceConfig.MaxBatch must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	cfg.MaxPayloadBytes = cmp.Or(cfg.MaxPayloadBytes, core.DefaultMaxPayloadBytes)
	cfg.MaxNotBefore = cmp.Or(cfg.MaxNotBefore, core.DefaultMaxNotBefore)
	cfg.MaxBatch = cmp.Or(cfg.MaxBatch, ports.DefaultMaxBatch)
	cfg.Metrics = cmp.Or[ports.Metrics](cfg.Metrics, ports.NopMetrics{})
	cfg.Tracer = cmp.Or[ports.Tracer](cfg.Tracer, ports.NopTracer{})
	return &Service{cfg: cfg}, nil
}

// SubmitIntent validates the submission, snapshots its target's contract and
// stores the intent with its first attempt due at once (or at notBefore). A
// repeat of an existing intent (same target, same payload in canonical form,
// same notBefore) returns it with Created=false and starts nothing; any other
// reuse of the intentId is a *core.IdempotencyConflictError. The intent
// keeps the trace context of the submission's span (trace.go).
func (s *Service) SubmitIntent(ctx context.Context, p ports.SubmitIntentParams) (ports.SubmitIntentResult, error) {
	span := s.startSubmit(ctx, p)
	res, err := s.submitIntent(ctx, p, span.TraceParent())
	span.End(submitEnd(res, err))
	return res, err
}

// submitIntent is SubmitIntent within its span; traceParent is what the
// new intent keeps.
func (s *Service) submitIntent(ctx context.Context, p ports.SubmitIntentParams, traceParent string) (ports.SubmitIntentResult, error) {
	sub, err := s.prepare(p)
	if err != nil {
		return ports.SubmitIntentResult{}, err
	}
	sub.intent.TraceParent = traceParent
	if sub.refusal != nil {
		return s.repeatOr(ctx, p.IntentID, sub.submission, sub.refusal)
	}
	created, err := s.cfg.Store.CreateIntent(ctx, sub.intent)
	if err != nil {
		return ports.SubmitIntentResult{}, err
	}
	return s.judge(sub, created)
}

// prepared is a submission checked as far as it can be without the store.
type prepared struct {
	// intent is what to store, when refusal is nil.
	intent     core.Intent
	submission core.Submission
	// refusal is set when the current configuration refuses the submission
	// (notBefore too far ahead, payload over the limit, unknown target); it
	// still answers a repeat of an intent stored before (see repeatOr).
	refusal error
}

// prepare validates a submission, compacts its payload and snapshots its
// target's contract. Its error is a refusal no stored intent can change.
func (s *Service) prepare(p ports.SubmitIntentParams) (prepared, error) {
	if err := core.ValidateIntentID(p.IntentID); err != nil {
		return prepared{}, err
	}
	if p.SubmissionTarget == "" {
		return prepared{}, &core.FieldError{Field: "submissionTarget", Message: "is required"}
	}
	payload, err := core.CompactPayload(p.Payload)
	if err != nil {
		return prepared{}, err
	}
	// A payload that repeats a member name has no single meaning to compare
	// or forward. (The canonical form itself is computed only when a repeat
	// is judged, from the stored bytes.)
	if err := core.CheckMemberNames(payload); err != nil {
		return prepared{}, err
	}
	// Every store keeps times to the microsecond; notBefore is kept at that
	// precision so that a repeat compares equal to what was stored.
	notBefore := p.NotBefore.Truncate(time.Microsecond).UTC()
	if p.NotBefore.IsZero() {
		notBefore = time.Time{}
	}
	sub := prepared{submission: core.Submission{SubmissionTarget: p.SubmissionTarget, Payload: payload, NotBefore: notBefore}}
	now := s.cfg.Clock.Now()
	if err := core.CheckNotBefore(notBefore, now, s.cfg.MaxNotBefore); err != nil {
		sub.refusal = err
		return sub, nil
	}
	if len(payload) > s.cfg.MaxPayloadBytes {
		sub.refusal = fmt.Errorf("%w: %d bytes compacted, the limit is %d",
			core.ErrPayloadTooLarge, len(payload), s.cfg.MaxPayloadBytes)
		return sub, nil
	}
	contract, ok := s.cfg.Registry.Lookup(p.SubmissionTarget)
	if !ok {
		sub.refusal = fmt.Errorf("%w: %q", core.ErrUnknownTarget, p.SubmissionTarget)
		return sub, nil
	}
	sub.intent = core.NewIntent(p.IntentID, contract, payload, now).WithNotBefore(notBefore)
	return sub, nil
}

// judge answers a prepared submission from what the store did with it: the
// one place a repeat is judged, since the store only reports what it holds.
// A created intent is counted and handed to the local executor.
func (s *Service) judge(sub prepared, created ports.CreateIntentResult) (ports.SubmitIntentResult, error) {
	if created.Refused != nil {
		return ports.SubmitIntentResult{}, created.Refused
	}
	if !created.Created {
		if created.Intent.IntentID != sub.intent.IntentID {
			// SQL Server compares strings as if padded with spaces, so the
			// key "a " collides with "a". Refusing is the only honest answer.
			return ports.SubmitIntentResult{}, &core.FieldError{Field: "intentId",
				Message: fmt.Sprintf("collides with the existing intentId %q: the store compares identifiers ignoring trailing spaces", created.Intent.IntentID)}
		}
		if err := core.CheckIdempotency(created.Intent, sub.submission); err != nil {
			return ports.SubmitIntentResult{}, err
		}
		return ports.SubmitIntentResult{Intent: created.Intent}, nil
	}
	s.cfg.Metrics.IntentCreated(created.Intent.SubmissionTarget)
	if s.cfg.Notifier != nil {
		s.cfg.Notifier.Notify(created.Intent)
	}
	return ports.SubmitIntentResult{Intent: created.Intent, Created: true}, nil
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

// GetIntent returns one intent with its attempts, its resubmission links
// and its operator events, or core.ErrIntentNotFound.
func (s *Service) GetIntent(ctx context.Context, intentID string) (core.Intent, error) {
	in, err := s.cfg.Store.GetIntent(ctx, intentID)
	if err != nil {
		return core.Intent{}, err
	}
	linked, err := s.withLinks(ctx, []core.Intent{in})
	if err != nil {
		return core.Intent{}, err
	}
	return s.withEvents(ctx, linked[0])
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

package memstore

import (
	"context"
	"fmt"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// StartAttempt records an attempt's start before its gateway call. In order
// it returns core.ErrFenced when the fence does not hold the lease unexpired
// in the store's time, core.ErrIntentNotFound, and core.ErrIntentNotRunnable
// when the intent is terminal or its attempt count is not Number-1. On
// success the attempt count becomes Number, which reserves the attempt: a
// second start of the same number fails as not runnable.
func (s *Store) StartAttempt(ctx context.Context, p ports.StartAttemptParams) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, now, err := s.fencedIntent(p.Fence, p.IntentID)
	if err != nil {
		return err
	}
	if in.Status.Terminal() || in.AttemptCount != p.Number-1 {
		return fmt.Errorf("%w: intent %q is %s with %d attempts, attempt %d asked",
			core.ErrIntentNotRunnable, p.IntentID, in.Status, in.AttemptCount, p.Number)
	}
	// An open attempt counts as sent, as in the SQL stores: the reservation
	// precedes the gateway call, which may have been made before a crash.
	in.Attempts = append(in.Attempts, core.Attempt{Number: p.Number, StartedAt: p.StartedAt, Sent: true,
		HolderID: p.Fence.HolderID, Epoch: p.Fence.Epoch})
	in.AttemptCount = p.Number
	in.LastModifiedAt = now
	s.signal()
	return nil
}

// FinishAttempt closes the intent's latest attempt and applies the decision
// in one step. It returns core.ErrFenced, core.ErrIntentNotFound, and
// core.ErrIntentNotRunnable when the intent is already terminal (terminal
// intents are append-only) or Number is not its open latest attempt, and
// ports.ErrInvalidWrite for what p.Validate refuses, so that a test of the
// executor fails loudly instead of storing a contradictory intent. Sent is
// kept on the attempt as given.
func (s *Store) FinishAttempt(ctx context.Context, p ports.FinishAttemptParams) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, now, err := s.fencedIntent(p.Fence, p.IntentID)
	if err != nil {
		return err
	}
	last := len(in.Attempts) - 1
	if in.Status.Terminal() || p.Number != in.AttemptCount || last < 0 ||
		in.Attempts[last].Number != p.Number || in.Attempts[last].Finished() {
		return fmt.Errorf("%w: intent %q is %s with %d attempts, finishing attempt %d asked",
			core.ErrIntentNotRunnable, p.IntentID, in.Status, in.AttemptCount, p.Number)
	}
	a := &in.Attempts[last]
	a.FinishedAt = p.FinishedAt
	a.Outcome = cloneOutcome(p.Outcome)
	a.Error = p.Error
	a.Sent = p.Sent
	d := p.Decision
	in.Status = d.Status
	in.NextDueAt = d.NextDueAt
	in.FinalOutcome = cloneOutcome(d.FinalOutcome)
	in.ExhaustedReason = d.ExhaustedReason
	in.PossiblyAccepted = in.PossiblyAccepted || d.PossiblyAccepted
	in.AcceptedAfterDeadline, in.AcceptedMessageID = d.AcceptedAfterDeadline, d.AcceptedMessageID
	in.LastModifiedAt = now
	s.signal()
	return nil
}

// checkFence is the fencing predicate of every execution write: the lease
// named by the fence is held by its holder at its epoch and unexpired at now,
// the store's time read once for the whole write as one SQL statement reads
// SYSUTCDATETIME() once. The caller holds the lock.
func checkFence(leases map[string]core.Lease, f core.Fence, now time.Time) error {
	l, ok := leases[f.LeaseName]
	if !ok || l.HolderID != f.HolderID || l.Epoch != f.Epoch || !l.ExpiresAt.After(now) {
		return fmt.Errorf("%w: %s held by %q at epoch %d", core.ErrFenced, f.LeaseName, f.HolderID, f.Epoch)
	}
	return nil
}

// fencedIntent is the prologue of every fenced write, with s.mu held: the
// fence must hold at the store's time, which it returns, and the intent
// must exist. A fenced-off write fails with core.ErrFenced whatever the
// intent, as in SQL.
func (s *Store) fencedIntent(fence core.Fence, intentID string) (*core.Intent, time.Time, error) {
	now := s.clock.Now()
	if err := checkFence(s.leases, fence, now); err != nil {
		return nil, now, err
	}
	in, ok := s.intents[intentID]
	if !ok {
		return nil, now, fmt.Errorf("%w: %q", core.ErrIntentNotFound, intentID)
	}
	return in, now, nil
}

// StartAttempts answers each attempt as StartAttempt would, in order, after
// the batch rule (ports.ValidateStarts).
func (s *Store) StartAttempts(ctx context.Context, ps []ports.StartAttemptParams) []error {
	errs := ports.ValidateStarts(ps)
	for i, p := range ps {
		if errs[i] == nil {
			errs[i] = s.StartAttempt(ctx, p)
		}
	}
	return errs
}

// FinishAttempts answers each attempt as FinishAttempt would, in order,
// after the batch rule (ports.ValidateFinishes).
func (s *Store) FinishAttempts(ctx context.Context, ps []ports.FinishAttemptParams) []error {
	errs := ports.ValidateFinishes(ps)
	for i, p := range ps {
		if errs[i] == nil {
			errs[i] = s.FinishAttempt(ctx, p)
		}
	}
	return errs
}

// Package memstore is an in-memory ports.Store and ports.LeaseStore for the
// application's tests. It is NOT a product store: nothing survives the
// process and nothing is shared between processes, so it must never be wired
// into the service. It passes the same conformance suites as the SQL stores
// (ports/storetest and ports/leasetest, run from its tests), so the fake every
// engine test stands on holds the semantics the real stores hold: fencing by
// (lease name, holder, epoch) unexpired in the store's own time,
// ErrIntentNotRunnable, race-safe creation, and the paging orders of
// ListIntents, ListPending and ListChanged. What it adds of its own is
// WaitIntent, which lets a test wait for the engine's writes without sleeping.
//
// The store's clock plays the database clock: every lease comparison and
// every LastModifiedAt stamp reads it, once per operation, never the
// caller's clock, just as the SQL stores use SYSUTCDATETIME(). Two writes at
// one instant of a fake clock get the same stamp, as they can in SQL Server,
// so the refresh cursor's tie-break on intentId is exercised.
package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Store holds intents and leases in memory behind one mutex, so every method
// is one atomic step, like a single SQL statement or transaction.
type Store struct {
	clock ports.Clock

	mu      sync.Mutex
	intents map[string]*core.Intent
	leases  map[string]core.Lease
	// links maps an intentId to its resubmission links (resubmit.go).
	links map[string]ports.ResubmissionLinks
	// events are the operator's actions on intents (intervention.go), by
	// intentId, oldest first.
	events map[string][]core.IntentEvent
	// pauses are the operator's gateway pauses (pause.go), by pauseKey.
	pauses map[string]core.GatewayPause
	// console is the console's session secret and sessions (session.go).
	console sessionState
	// changed is closed and replaced on every write, so WaitIntent wakes
	// without polling.
	changed chan struct{}
}

var (
	_ ports.Store      = (*Store)(nil)
	_ ports.LeaseStore = (*Store)(nil)
)

// New returns an empty store whose time (the "database time") is clock's.
func New(clock ports.Clock) *Store {
	return &Store{
		clock:   clock,
		intents: make(map[string]*core.Intent),
		leases:  make(map[string]core.Lease),
		changed: make(chan struct{}),
	}
}

// Facts: one lock orders every change, so changes become visible in the
// order of their markers and a refresh never needs to look back.
func (s *Store) Facts() ports.StoreFacts { return ports.StoreFacts{} }

// CreateIntent inserts the intent stamped with the store's time, or returns
// the stored intent of the same intentId unjudged. The lookup and the insert
// happen under one lock, as the primary key decides in SQL.
func (s *Store) CreateIntent(ctx context.Context, intent core.Intent) (ports.CreateIntentResult, error) {
	if err := ctxErr(ctx); err != nil {
		return ports.CreateIntentResult{}, err
	}
	if intent.IntentID == "" || intent.Status != core.StatusPending || len(intent.Attempts) != 0 {
		return ports.CreateIntentResult{}, fmt.Errorf("memstore: create intent %q: a new intent is pending with no attempts", intent.IntentID)
	}
	if intent.NextDueAt.IsZero() {
		return ports.CreateIntentResult{}, fmt.Errorf("memstore: create intent %q: a pending intent needs NextDueAt", intent.IntentID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if existing, ok := s.intents[intent.IntentID]; ok {
		return ports.CreateIntentResult{Intent: cloneIntent(existing)}, nil
	}
	stored := cloneIntent(&intent)
	stored.AttemptCount = 0
	stored.LastModifiedAt = s.clock.Now()
	s.intents[stored.IntentID] = &stored
	s.signal()
	return ports.CreateIntentResult{Intent: cloneIntent(&stored), Created: true}, nil
}

// GetIntent returns a copy of the intent with its attempts.
func (s *Store) GetIntent(ctx context.Context, intentID string) (core.Intent, error) {
	if err := ctxErr(ctx); err != nil {
		return core.Intent{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.intents[intentID]
	if !ok {
		return core.Intent{}, fmt.Errorf("%w: %q", core.ErrIntentNotFound, intentID)
	}
	return cloneIntent(in), nil
}

// GetIntents returns copies of the stored intents among intentIDs, with
// their attempts; unknown intentIds are left out.
func (s *Store) GetIntents(ctx context.Context, intentIDs []string) ([]core.Intent, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []core.Intent
	seen := make(map[string]bool, len(intentIDs))
	for _, id := range intentIDs {
		if in, ok := s.intents[id]; ok && !seen[id] {
			seen[id] = true
			out = append(out, cloneIntent(in))
		}
	}
	return out, nil
}

// ListIntents returns at most p.Limit intents newest first by (CreatedAt,
// IntentID) that match the filters, strictly after p.Before, or the
// p.Limit nearest strictly before p.After; the service cuts the pages.
func (s *Store) ListIntents(ctx context.Context, p ports.ListIntentsParams) ([]core.Intent, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if p.Limit < 1 {
		return nil, fmt.Errorf("memstore: list intents: limit %d is below 1", p.Limit)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var match []*core.Intent
	for _, in := range s.intents {
		if listed(in, p) {
			match = append(match, in)
		}
	}
	slices.SortFunc(match, func(a, b *core.Intent) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.IntentID, a.IntentID)
	})
	if p.After != nil {
		// The nearest to After are the oldest of the newer ones.
		match = match[max(0, len(match)-p.Limit):]
	}
	var intents []core.Intent
	for _, in := range match[:min(len(match), p.Limit)] {
		intents = append(intents, cloneIntent(in))
	}
	return intents, nil
}

// listed reports whether in matches the listing's filters and lies on the
// side of its position that p asks for.
func listed(in *core.Intent, p ports.ListIntentsParams) bool {
	switch {
	case p.Status != "" && in.Status != p.Status,
		p.SubmissionTarget != "" && in.SubmissionTarget != p.SubmissionTarget,
		p.PossiblyAccepted && !in.PossiblyAccepted,
		p.AcceptedAfterDeadline && !in.AcceptedAfterDeadline,
		!strings.HasPrefix(in.IntentID, p.IntentIDPrefix),
		!p.CreatedFrom.IsZero() && in.CreatedAt.Before(p.CreatedFrom),
		!p.CreatedBefore.IsZero() && !in.CreatedAt.Before(p.CreatedBefore),
		p.LastResult != "" && !lastResultHas(in, p.LastResult),
		p.Before != nil && !olderThan(in, *p.Before),
		p.After != nil && !newerThan(in, *p.After):
		return false
	}
	return true
}

// lastResultHas reports whether the latest attempt's outcome status,
// outcome reason or error contains fragment, ignoring the case of ASCII
// letters only, as the SQL stores' lower() does.
func lastResultHas(in *core.Intent, fragment string) bool {
	last, ok := in.LastAttempt()
	if !ok || last.Number != in.AttemptCount {
		return false
	}
	fragment = asciiLower(fragment)
	texts := []string{last.Error}
	if last.Outcome != nil {
		texts = append(texts, string(last.Outcome.Status), last.Outcome.Reason)
	}
	for _, text := range texts {
		if strings.Contains(asciiLower(text), fragment) {
			return true
		}
	}
	return false
}

// asciiLower lowers ASCII letters and leaves every other byte as it is.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// olderThan reports whether in comes strictly after pos in newest-first order.
func olderThan(in *core.Intent, pos ports.IntentPosition) bool {
	if c := in.CreatedAt.Compare(pos.CreatedAt); c != 0 {
		return c < 0
	}
	return in.IntentID < pos.IntentID
}

// newerThan reports whether in comes strictly before pos in newest-first
// order.
func newerThan(in *core.Intent, pos ports.IntentPosition) bool {
	if c := in.CreatedAt.Compare(pos.CreatedAt); c != 0 {
		return c > 0
	}
	return in.IntentID > pos.IntentID
}

// ListPending returns pending intents with an intentId after p.AfterIntentID,
// ordered by intentId.
func (s *Store) ListPending(ctx context.Context, p ports.ListPendingParams) ([]ports.ScheduleRow, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if p.Limit < 1 {
		return nil, fmt.Errorf("memstore: list pending: limit %d is below 1", p.Limit)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var rows []ports.ScheduleRow
	for _, in := range s.intents {
		if in.Status == core.StatusPending && in.IntentID > p.AfterIntentID {
			rows = append(rows, scheduleRow(in))
		}
	}
	slices.SortFunc(rows, func(a, b ports.ScheduleRow) int { return strings.Compare(a.IntentID, b.IntentID) })
	return rows[:min(len(rows), p.Limit)], nil
}

// ListChanged returns intents of any status whose (LastModifiedAt, IntentID)
// comes after the cursor, in that order, so rows sharing a timestamp are
// never skipped.
func (s *Store) ListChanged(ctx context.Context, p ports.ListChangedParams) ([]ports.ScheduleRow, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if p.Limit < 1 {
		return nil, fmt.Errorf("memstore: list changed: limit %d is below 1", p.Limit)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var rows []ports.ScheduleRow
	for _, in := range s.intents {
		if compareCursor(in, p.After) > 0 {
			rows = append(rows, scheduleRow(in))
		}
	}
	slices.SortFunc(rows, func(a, b ports.ScheduleRow) int {
		if c := a.LastModifiedAt.Compare(b.LastModifiedAt); c != 0 {
			return c
		}
		return strings.Compare(a.IntentID, b.IntentID)
	})
	return rows[:min(len(rows), p.Limit)], nil
}

// LatestChange returns the cursor of the most recently changed intent, or the
// zero cursor when the store is empty.
func (s *Store) LatestChange(ctx context.Context) (ports.ChangeCursor, error) {
	if err := ctxErr(ctx); err != nil {
		return ports.ChangeCursor{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var latest ports.ChangeCursor
	for _, in := range s.intents {
		if compareCursor(in, latest) > 0 {
			latest = ports.ChangeCursor{LastModifiedAt: in.LastModifiedAt, IntentID: in.IntentID}
		}
	}
	return latest, nil
}

// compareCursor orders an intent against a cursor by (LastModifiedAt, IntentID).
func compareCursor(in *core.Intent, c ports.ChangeCursor) int {
	if d := in.LastModifiedAt.Compare(c.LastModifiedAt); d != 0 {
		return d
	}
	return strings.Compare(in.IntentID, c.IntentID)
}

func scheduleRow(in *core.Intent) ports.ScheduleRow {
	return ports.ScheduleRow{
		IntentID:       in.IntentID,
		Status:         in.Status,
		Mode:           in.Contract.Mode,
		NextDueAt:      in.NextDueAt,
		LastModifiedAt: in.LastModifiedAt,
	}
}

// ctxErr is the one place memstore turns a finished context into an error,
// as a SQL driver refuses to start a statement on a cancelled context. The
// error is core.ErrStoreUnavailable (it says nothing about the request) and
// also wraps the context's error, so a caller can tell shutdown apart.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: %w: %w", core.ErrStoreUnavailable, err)
	}
	return nil
}

// signal wakes WaitIntent callers; the caller holds the lock.
func (s *Store) signal() {
	close(s.changed)
	s.changed = make(chan struct{})
}

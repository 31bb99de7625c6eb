package sqlite

import (
	"context"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.InterventionStore = (*store)(nil)

// CancelIntent is one write of the group committer: the conditional update
// of the intent decides (pending, its latest attempt absent or finished),
// and the event follows in the same transaction only when it changed the
// row. The writer's transaction excludes every other writer, StartAttempts
// included, so a cancel and a reservation of the intent never both apply.
// See ports.InterventionStore.
func (s *store) CancelIntent(ctx context.Context, p ports.IntentActionParams) (bool, error) {
	if err := p.Validate(); err != nil {
		return false, fmt.Errorf("sqlite: %w", err)
	}
	return s.intervene(ctx, "cancel intent", p, core.ActionCancel,
		func(ctx context.Context, q *writeTx, stamp int64) (int64, error) {
			return q.CancelIntent(ctx, sqlitedb.CancelIntentParams{LastModifiedAt: stamp, IntentID: p.IntentID})
		},
		func(st sqlitedb.IntentActionStateRow) error {
			return ports.CancelVerdict(p.IntentID, core.IntentStatus(st.Status), core.ExhaustedReason(st.ExhaustedReason.String))
		})
}

// RunIntentNow makes a pending intent due at the write's stamp, when it is
// due later, in one write with its event. The stamp is the store's now and
// the row's change marker at once, and stamps increase strictly, so a
// repeat finds the intent due. See ports.InterventionStore.
func (s *store) RunIntentNow(ctx context.Context, p ports.IntentActionParams) (bool, error) {
	if err := p.Validate(); err != nil {
		return false, fmt.Errorf("sqlite: %w", err)
	}
	return s.intervene(ctx, "run intent now", p, core.ActionRunNow,
		func(ctx context.Context, q *writeTx, stamp int64) (int64, error) {
			return q.RunIntentNow(ctx, sqlitedb.RunIntentNowParams{Now: nullNanos(fromNanos(stamp)), IntentID: p.IntentID})
		},
		func(st sqlitedb.IntentActionStateRow) error {
			return ports.RunNowVerdict(p.IntentID, core.IntentStatus(st.Status))
		})
}

// intervene runs an action's update at a fresh stamp and, when it changed
// the intent, inserts the event; when it did not, verdict reads why from
// the intent as the same transaction sees it (a verdict error, or nil for
// a repeat with nothing to do).
func (s *store) intervene(ctx context.Context, op string, p ports.IntentActionParams, action core.IntentAction,
	update func(ctx context.Context, q *writeTx, stamp int64) (int64, error),
	verdict func(sqlitedb.IntentActionStateRow) error) (bool, error) {
	applied := false
	err := s.db.write(ctx, op, func(ctx context.Context, q *writeTx) error {
		applied = false
		stamp, err := q.Stamp(ctx)
		if err != nil {
			return err
		}
		n, err := update(ctx, q, stamp)
		if err != nil {
			return err
		}
		if n == 0 {
			st, err := q.IntentActionState(ctx, p.IntentID)
			if noRows(err) {
				return fmt.Errorf("%w: %q", core.ErrIntentNotFound, p.IntentID)
			}
			if err != nil {
				return err
			}
			return verdict(st)
		}
		applied = true
		return q.InsertIntentEvent(ctx, sqlitedb.InsertIntentEventParams{
			IntentID: p.IntentID, OccurredAt: stamp, Action: string(action),
			Surface: p.Actor.Surface, Role: p.Actor.Role.String(), SessionTag: nullString(p.Actor.Session),
		})
	})
	return applied && err == nil, err
}

// IntentEvents reads the intent's events, oldest first.
func (s *store) IntentEvents(ctx context.Context, intentID string) ([]core.IntentEvent, error) {
	rows, err := s.db.readQueries(ctx).ListIntentEvents(ctx, intentID)
	if err != nil {
		return nil, mapError("intent events", err)
	}
	out := make([]core.IntentEvent, len(rows))
	for i, r := range rows {
		role, ok := core.RoleNamed(r.Role)
		if !ok {
			return nil, fmt.Errorf("sqlite: intent events of %q: %w: unknown role %q", intentID, core.ErrStoreUnavailable, r.Role)
		}
		out[i] = core.IntentEvent{Number: int(r.EventNumber), At: fromNanos(r.OccurredAt), Action: core.IntentAction(r.Action),
			Actor: core.Actor{Surface: r.Surface, Role: role, Session: r.SessionTag.String}}
	}
	return out, nil
}

package sqlite

import (
	"context"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.PauseStore = (*store)(nil)

// ListPauses returns the pauses in force, type pauses first. See
// ports.PauseStore.
func (s *store) ListPauses(ctx context.Context) ([]core.GatewayPause, error) {
	rows, err := s.db.reads.ListGatewayPauses(ctx)
	if err != nil {
		return nil, mapError("list pauses", err)
	}
	out := make([]core.GatewayPause, len(rows))
	for i, r := range rows {
		out[i] = core.StoredPause(r.SelectorKind, r.Selector, fromNanos(r.PausedAt))
	}
	return out, nil
}

// PauseGateway stores the pause, unfenced: it is an operator write. The
// insert keeps an existing pause, and the read in the same write returns
// the stored one, so pausing twice returns the first PausedAt.
func (s *store) PauseGateway(ctx context.Context, p core.GatewayPause) (core.GatewayPause, error) {
	if err := core.ValidateGatewaySelector(p.GatewayType, p.GatewayURL); err != nil {
		return core.GatewayPause{}, err
	}
	kind, selector := core.PauseSelector(p.GatewayType, p.GatewayURL)
	var pausedAt int64
	err := s.db.writeSingle(ctx, "pause gateway", func(ctx context.Context, q *writeTx) error {
		err := q.InsertGatewayPause(ctx, sqlitedb.InsertGatewayPauseParams{
			SelectorKind: kind, Selector: selector, PausedAt: nanos(q.now()),
		})
		if err != nil {
			return err
		}
		pausedAt, err = q.GetGatewayPause(ctx, sqlitedb.GetGatewayPauseParams{SelectorKind: kind, Selector: selector})
		return err
	})
	if err != nil {
		return core.GatewayPause{}, err
	}
	return core.StoredPause(kind, selector, fromNanos(pausedAt)), nil
}

// ResumeGateway removes the pause and reports whether there was one.
func (s *store) ResumeGateway(ctx context.Context, t core.GatewayType, gatewayURL string) (bool, error) {
	kind, selector := core.PauseSelector(t, gatewayURL)
	var n int64
	err := s.db.writeSingle(ctx, "resume gateway", func(ctx context.Context, q *writeTx) error {
		var err error
		n, err = q.DeleteGatewayPause(ctx, sqlitedb.DeleteGatewayPauseParams{SelectorKind: kind, Selector: selector})
		return err
	})
	return n > 0, err
}

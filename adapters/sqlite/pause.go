package sqlite

import (
	"context"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.PauseStore = (*store)(nil)

// The selector kinds of a pause row.
const (
	pauseByType = "type"
	pauseByURL  = "url"
)

// pauseSelector is the key of a pause row: its kind and what it names.
func pauseSelector(t core.GatewayType, gatewayURL string) (kind, selector string) {
	if gatewayURL != "" {
		return pauseByURL, gatewayURL
	}
	return pauseByType, string(t)
}

// pauseFromRow converts a stored pause.
func pauseFromRow(kind, selector string, pausedAt int64) core.GatewayPause {
	p := core.GatewayPause{PausedAt: fromNanos(pausedAt)}
	if kind == pauseByURL {
		p.GatewayURL = selector
	} else {
		p.GatewayType = core.GatewayType(selector)
	}
	return p
}

// ListPauses returns the pauses in force, type pauses first. See
// ports.PauseStore.
func (s *store) ListPauses(ctx context.Context) ([]core.GatewayPause, error) {
	rows, err := s.db.reads.ListGatewayPauses(ctx)
	if err != nil {
		return nil, mapError("list pauses", err)
	}
	out := make([]core.GatewayPause, len(rows))
	for i, r := range rows {
		out[i] = pauseFromRow(r.SelectorKind, r.Selector, r.PausedAt)
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
	kind, selector := pauseSelector(p.GatewayType, p.GatewayURL)
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
	return pauseFromRow(kind, selector, pausedAt), nil
}

// ResumeGateway removes the pause and reports whether there was one.
func (s *store) ResumeGateway(ctx context.Context, t core.GatewayType, gatewayURL string) (bool, error) {
	kind, selector := pauseSelector(t, gatewayURL)
	var n int64
	err := s.db.writeSingle(ctx, "resume gateway", func(ctx context.Context, q *writeTx) error {
		var err error
		n, err = q.DeleteGatewayPause(ctx, sqlitedb.DeleteGatewayPauseParams{SelectorKind: kind, Selector: selector})
		return err
	})
	return n > 0, err
}

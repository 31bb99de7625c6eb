package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.PauseStore = (*store)(nil)

// pauseAttempts bounds PauseGateway's insert-then-read loop: only a resume
// of the same gateway landing between the two sends it round again.
const pauseAttempts = 3

// ListPauses returns the pauses in force, type pauses first. See
// ports.PauseStore.
func (s *store) ListPauses(ctx context.Context) ([]core.GatewayPause, error) {
	rows, err := s.q.ListGatewayPauses(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]core.GatewayPause, len(rows))
	for i, r := range rows {
		out[i] = core.StoredPause(r.SelectorKind, r.Selector, r.PausedAt.UTC())
	}
	return out, nil
}

// PauseGateway stores the pause, unfenced: it is an operator write. It
// inserts without reading first, so pauses from several instances at once
// cannot both insert: the primary key refuses all but the first (an
// already paused gateway), and the read that follows returns the stored
// pause with its first PausedAt.
func (s *store) PauseGateway(ctx context.Context, p core.GatewayPause) (core.GatewayPause, error) {
	if err := core.ValidateGatewaySelector(p.GatewayType, p.GatewayURL); err != nil {
		return core.GatewayPause{}, err
	}
	if nvarcharLen(p.GatewayURL) > core.MaxPausedURLLength {
		return core.GatewayPause{}, &core.FieldError{Field: "gatewayUrl",
			Message: fmt.Sprintf("must be at most %d UTF-16 code units", core.MaxPausedURLLength)}
	}
	kind, selector := core.PauseSelector(p.GatewayType, p.GatewayURL)
	for range pauseAttempts {
		err := mapError(s.q.InsertGatewayPause(ctx, sqlserverdb.InsertGatewayPauseParams{
			SelectorKind: kind, Selector: selector}))
		if err != nil && !errors.Is(err, errDuplicateKey) {
			return core.GatewayPause{}, err
		}
		pausedAt, err := s.q.GetGatewayPause(ctx, sqlserverdb.GetGatewayPauseParams{
			SelectorKind: kind, Selector: selector})
		if errors.Is(err, sql.ErrNoRows) {
			continue // resumed between the insert and the read
		}
		if err != nil {
			return core.GatewayPause{}, mapError(err)
		}
		return core.StoredPause(kind, selector, pausedAt.UTC()), nil
	}
	return core.GatewayPause{}, fmt.Errorf("sqlserver: pause %s %q: %w: resumed concurrently %d times",
		kind, selector, core.ErrStoreUnavailable, pauseAttempts)
}

// ResumeGateway removes the pause and reports whether there was one.
func (s *store) ResumeGateway(ctx context.Context, t core.GatewayType, gatewayURL string) (bool, error) {
	kind, selector := core.PauseSelector(t, gatewayURL)
	n, err := s.q.DeleteGatewayPause(ctx, sqlserverdb.DeleteGatewayPauseParams{
		SelectorKind: kind, Selector: selector})
	if err != nil {
		return false, mapError(err)
	}
	return n > 0, nil
}

package ports

import (
	"context"

	"github.com/submissionmanager/submission-manager/core"
)

// PauseStore keeps the operator's gateway pauses in the database, so every
// instance, and the next leader after a failover or restart, sees them.
// Pauses are operator writes, not execution state: they are not fenced.
// Every Store is one.
type PauseStore interface {
	// ListPauses returns every pause in force, ordered by type pauses
	// first (by type), then URL pauses (by URL).
	ListPauses(ctx context.Context) ([]core.GatewayPause, error)
	// PauseGateway stores a pause of exactly one of p.GatewayType and
	// p.GatewayURL. Pausing what is already paused changes nothing and
	// returns the stored pause (its first PausedAt): it is idempotent.
	PauseGateway(ctx context.Context, p core.GatewayPause) (core.GatewayPause, error)
	// ResumeGateway removes the pause of the type or URL (exactly one set)
	// and reports whether there was one.
	ResumeGateway(ctx context.Context, t core.GatewayType, gatewayURL string) (bool, error)
}

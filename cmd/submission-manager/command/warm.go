package command

import (
	"context"
	"time"
)

// warmUpTimeout bounds the store's warm-up at start: past it the instance
// listens with the connections warmed so far, since a warm pool only
// saves its first requests time and is never a reason not to serve.
const warmUpTimeout = 30 * time.Second

// warm readies db's connections before Start opens the listener, so an
// instance enters HAProxy's rotation (and a leader starts executing) with
// the pools it keeps under load rather than opening them under it. A
// failure is logged and the start goes on.
func (s *Server) warm(ctx context.Context, db database) {
	ctx, cancel := context.WithTimeout(ctx, warmUpTimeout)
	defer cancel()
	start := time.Now()
	if err := db.Warm(ctx); err != nil {
		s.log.WarnContext(ctx, "store_warm_up_failed", "error", err.Error(), "took", time.Since(start))
		return
	}
	s.log.DebugContext(ctx, "store_warmed", "took", time.Since(start))
}

package command

import (
	"context"
	"time"
)

// warmUpTimeout bounds each of the store's warm-ups at start: past it the
// instance goes on with the connections warmed so far, since a warm pool
// only saves its first requests time and is never a reason not to serve.
const warmUpTimeout = 30 * time.Second

// warm runs one of db's warm-ups (pool names it in the log). Start warms
// the executor's pool before the elector starts and the query pool before
// the listener serves, so that an instance enters HAProxy's rotation, and
// a leader executes, with the pools it keeps under load rather than
// opening them under it. A failure is logged and the start goes on.
func (s *Server) warm(ctx context.Context, pool string, warmUp func(context.Context) error) {
	ctx, cancel := context.WithTimeout(ctx, warmUpTimeout)
	defer cancel()
	start := time.Now()
	if err := warmUp(ctx); err != nil {
		s.log.WarnContext(ctx, "store_warm_up_failed", "pool", pool, "error", err.Error(), "took", time.Since(start))
		return
	}
	s.log.DebugContext(ctx, "store_warmed", "pool", pool, "took", time.Since(start))
}

// awaitFirstTry waits for the elector's first try at the lease (tried),
// bounded as a warm-up is: a start goes on even if the store hangs.
func (s *Server) awaitFirstTry(ctx context.Context, tried <-chan struct{}) {
	timer := time.NewTimer(warmUpTimeout)
	defer timer.Stop()
	select {
	case <-tried:
	case <-timer.C:
		s.log.WarnContext(ctx, "leader_first_try_late", "waited", warmUpTimeout)
	case <-ctx.Done():
	}
}

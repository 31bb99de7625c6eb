package sqlserver

import (
	"context"
	"database/sql"
	"log/slog"
	"time"
)

// The query pool's growth. On a server whose connections each compile a
// procedure at its first call there (engine.firstCallCompiles: Babelfish,
// about 0.7 s of the server's CPU for the intake's, almost all of it its
// T-SQL parser), a pool allowed to open all its connections at once makes
// the first burst of load pay for all of them together: twenty compiles,
// 14-18 s of the server's CPU in the same seconds, which a fresh instance
// offered 500 intents/s by 64 clients felt as first-attempt lateness of
// 23-32 s p99 when it had warmed only 4 connections (docs/sqlserver.md).
// Warming all twenty before serving kept that away, but spent the same
// CPU at every start, beside a new leader's first batches: it held a
// backlog's drain at about 1,250 attempts/s against about 2,000 without.
//
// So on such a server the pool starts at the connections that serve warms
// (Config.WarmConns) and grows only while they do not carry the load: in a
// step (growEvery) in which requests waited for a connection and every
// connection was in use at half the step's samples or more (a load that
// fills the pool, not a moment's burst), the growth raises the limit by
// one, opens the connection itself, warms it as WarmQueries does and gives
// it to the pool, where a waiting request takes it. So at most one compile
// runs at a time, a request pays one only if it opens the connection a
// raise allows in the moment before the growth does, and a load that the
// warm connections carry (a backlog's drain, a steady 500 intents/s) never
// pays for the others. An added connection is not closed when the load
// ends: it is paid for. A server with one plan cache for every session
// (SQL Server) lets the pool open connections freely: there a new one
// costs a login.

// defaultGrowEvery is how often the query pool may add a connection while
// requests wait for one: about a compile's length, so that compiles follow
// one another rather than pile up.
const defaultGrowEvery = 500 * time.Millisecond

// growSamples is how many times a step looks at whether every connection
// is in use.
const growSamples = 20

// growWarmTimeout bounds the warm-up of one added connection.
const growWarmTimeout = 30 * time.Second

// poolGrowth raises a pool's connection limit one step at a time while
// requests wait for a connection, up to the limit configured. Close stops it.
type poolGrowth struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// growPool limits pool to from connections (and as many idle ones, at most
// maxIdle) and starts raising the limit by one at the end of every step
// (every) in which requests began to wait for a connection and every open
// connection was in use at half its samples (growSamples) or more, until
// it reaches to. After each raise it takes a connection from the pool,
// which opens the one the raise allows unless one is idle by then, runs
// warm on it (nil: nothing) and gives it back, to a waiting request if one
// is left. A warm that fails is logged and costs only the warmth: the
// connection stays in the pool, and database/sql drops it if it is broken.
func growPool(pool *sql.DB, from, to, maxIdle int, every time.Duration, warm func(context.Context, *sql.Conn) error, log *slog.Logger) *poolGrowth {
	limit := func(n int) {
		pool.SetMaxOpenConns(n)
		pool.SetMaxIdleConns(min(n, maxIdle))
	}
	limit(from)
	ctx, cancel := context.WithCancel(context.Background())
	g := &poolGrowth{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(g.done)
		tick := time.NewTicker(every / growSamples)
		defer tick.Stop()
		last := pool.Stats().WaitCount
		for n, sample, full := from, 0, 0; n < to; {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			s := pool.Stats()
			if s.InUse >= n {
				full++
			}
			if sample++; sample < growSamples {
				continue
			}
			grow := s.WaitCount > last && 2*full >= growSamples
			sample, full, last = 0, 0, s.WaitCount
			if !grow {
				continue
			}
			n++
			limit(n)
			if err := addConn(ctx, pool, warm); err != nil && ctx.Err() == nil {
				log.WarnContext(ctx, "query_pool_growth_warm_up_failed", "conns", n, "error", err)
			}
			// The step's own take may have waited: that wait is not a
			// request's.
			last = pool.Stats().WaitCount
		}
	}()
	return g
}

// addConn takes a connection from pool, warms it and gives it back.
func addConn(ctx context.Context, pool *sql.DB, warm func(context.Context, *sql.Conn) error) error {
	ctx, cancel := context.WithTimeout(ctx, growWarmTimeout)
	defer cancel()
	c, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	if warm == nil {
		return nil
	}
	return warm(ctx, c)
}

// close stops the growth and waits for it; the pool keeps its limit.
func (g *poolGrowth) close() {
	if g == nil {
		return
	}
	g.cancel()
	<-g.done
}

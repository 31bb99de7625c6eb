package sqlserver

import (
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Statistics as the tables grow. On Babelfish the planner knows of a table
// only what PostgreSQL's ANALYZE gathered, and only autovacuum runs that:
// once a minute at best, after a tenth of the table has changed. A table
// analyzed while empty, or never, gets plans that scan it whole for the
// executor's batches: submission_finish_attempts for 50 items took 19 ms
// at 1,000 intents, 94 ms at 6,000 and 360 ms at 12,000 without
// statistics; 3-5 ms once they were gathered at 6,000, and 8 ms at 12,000
// when they were gathered at 1,000 (this machine). A fresh database under
// load therefore fell seconds behind in its first minute, until autovacuum
// came round, and by as much as the moment it came varied
// (docs/sqlserver.md, "Statistics"). So where the engine says so
// (engine.gathersStatistics) the adapter counts the rows it writes and runs
// sp_updatestats, SQL Server's own procedure for it (on Babelfish an
// ANALYZE of every table of every database on the server), when the count
// reaches firstStatisticsAt and again each time it has grown
// statisticsGrowth times since a run began, as long as one of the
// executor's tables holds rows but no statistics of them:
// statistics gathered on a table with rows keep its plans as it grows, and
// autovacuum refreshes them from then on, so a database gets about one run
// per table in its life, and an instance that starts on an analyzed one
// runs none. SQL Server creates and updates statistics when it compiles a
// statement, so the adapter leaves them to it there.

// firstStatisticsAt is how many rows the adapter writes before it first
// gathers statistics.
const firstStatisticsAt = 1000

// statisticsGrowth is how many times the rows written must have grown
// since a run began before the next.
const statisticsGrowth = 8

// statisticsTimeout bounds one run of sp_updatestats (about 0.3 s at tens
// of thousands of rows: ANALYZE samples at most 30,000 rows of a table).
const statisticsTimeout = time.Minute

// updateStatisticsSQL gathers the statistics of every table of the
// database.
const updateStatisticsSQL = `EXEC sp_updatestats`

// statisticsMissingSQL counts the executor's tables that hold rows but no
// statistics of rows: PostgreSQL's reltuples is -1 before a table's first
// ANALYZE and 0 after one that found it empty. A table without rows is not
// counted, so that an instance that only takes intents in stops asking once
// submission_intents has its statistics, while submission_attempts is
// still empty. Babelfish serves pg_catalog to T-SQL, and its OBJECT_ID is
// the table's oid; the statement runs only there.
const statisticsMissingSQL = `SELECT
    CASE WHEN EXISTS (SELECT 1 FROM dbo.submission_intents)
          AND (SELECT c.reltuples FROM pg_catalog.pg_class AS c WHERE c.oid = OBJECT_ID('dbo.submission_intents')) <= 0
         THEN 1 ELSE 0 END
  + CASE WHEN EXISTS (SELECT 1 FROM dbo.submission_attempts)
          AND (SELECT c.reltuples FROM pg_catalog.pg_class AS c WHERE c.oid = OBJECT_ID('dbo.submission_attempts')) <= 0
         THEN 1 ELSE 0 END`

// statistics counts the rows written through one DB and runs
// sp_updatestats, one run at a time, when the count reaches next. close
// stops a run under way and waits for it.
type statistics struct {
	// missing reports whether a table holds rows but lacks statistics of
	// them, and update runs sp_updatestats (newStatistics), or a test's
	// stand-ins.
	missing func(context.Context) (bool, error)
	update  func(context.Context) error
	log     *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	runs   sync.WaitGroup

	// off is set once the counter will never run again (the engine
	// gathers its own statistics, or the tables have theirs), so that
	// every later write skips mu: the executor's batches and each
	// submission write through here.
	off atomic.Bool

	mu      sync.Mutex
	written int
	next    int // 0: never (the engine gathers its own)
	running bool
}

// newStatistics returns the counter that asks on queries whether a run is
// needed and runs sp_updatestats on plain; on an engine that gathers its
// own statistics it counts nothing and never runs. The question goes to
// the query pool, whose connections are warm: on a new connection of
// goose's pool, which keeps none, its first parse cost Babelfish 0.27-0.35
// s of CPU, and 1.4 s of a fresh leader's first seconds at 500 intents/s
// went to it. sp_updatestats runs for a second or more under load, so it
// keeps off the query pool.
func newStatistics(queries, plain *sql.DB, eng engine, log *slog.Logger) *statistics {
	missing := func(ctx context.Context) (bool, error) {
		var n int
		err := queries.QueryRowContext(ctx, statisticsMissingSQL).Scan(&n)
		return n > 0, mapError(err)
	}
	update := func(ctx context.Context) error {
		_, err := plain.ExecContext(ctx, updateStatisticsSQL)
		return mapError(err)
	}
	return startStatistics(missing, update, eng.gathersStatistics, log)
}

// startStatistics is newStatistics with the run's statements given.
func startStatistics(missing func(context.Context) (bool, error), update func(context.Context) error, gather bool, log *slog.Logger) *statistics {
	ctx, cancel := context.WithCancel(context.Background())
	s := &statistics{missing: missing, update: update, log: log, ctx: ctx, cancel: cancel}
	if gather {
		s.next = firstStatisticsAt
	} else {
		s.off.Store(true)
	}
	return s
}

// wrote counts rows written (inserted or updated) and starts a run when the
// count has reached the next threshold and no run is under way; a run that
// is due while one is under way waits for the next write after it.
func (s *statistics) wrote(rows int) {
	if s.off.Load() || rows <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == 0 {
		return
	}
	s.written += rows
	if s.running || s.written < s.next || s.ctx.Err() != nil {
		return
	}
	s.running = true
	s.next = statisticsGrowth * s.written
	s.runs.Go(s.run)
}

// run is one sp_updatestats, when a table holds rows but no statistics of
// them: where none does (another instance, or autovacuum, gathered them,
// or a table is still empty), it runs nothing, now or later, and leaves
// them to autovacuum. A
// failure costs only the statistics: the next threshold stands, and
// autovacuum still gathers them in time.
func (s *statistics) run() {
	done := false
	defer func() {
		s.mu.Lock()
		s.running = false
		if done {
			s.next = 0
			s.off.Store(true)
		}
		s.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(s.ctx, statisticsTimeout)
	defer cancel()
	missing, err := s.missing(ctx)
	if err == nil && !missing {
		done = true
		return
	}
	start := time.Now()
	if err := s.update(ctx); err != nil {
		if s.ctx.Err() == nil {
			s.log.WarnContext(ctx, "statistics_update_failed", "error", err.Error())
		}
		return
	}
	s.log.DebugContext(ctx, "statistics_updated", "took", time.Since(start))
}

// close stops a run under way and waits for it. It cancels under mu, so
// that no write starts a run once Wait may have begun.
func (s *statistics) close() {
	s.mu.Lock()
	s.cancel()
	s.mu.Unlock()
	s.runs.Wait()
}

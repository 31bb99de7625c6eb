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
//
// Because sp_updatestats analyzes every table, a run while
// submission_attempts held no rows but had pages (the warm-ups' rolled-back
// attempts) left it statistics of no rows in that many pages, and
// PostgreSQL scales that density to the table's size: it plans the table
// as empty however large it grows, until the next ANALYZE. A standby that
// took over a backlog on such a table put it on the outside of its
// batches' joins, and one UPDATE of a result batch took 7.8 s at a few
// thousand attempts (docs/sqlserver.md, "Statistics"). Such a table
// (statisticsPinned) gets a run whatever the count, and an instance looks
// for one once its own attempts reach firstStatisticsLookAt: only a leader
// writes them, and it may be the first to. Its executor's batches wait from
// the look's start until it has found no pin or the run has landed.

// firstStatisticsAt is how many rows the adapter writes before it first
// gathers statistics.
const firstStatisticsAt = 1000

// statisticsGrowth is how many times the rows written must have grown
// since a run began before the next.
const statisticsGrowth = 8

// firstStatisticsLookAt is how many rows of submission_attempts an
// instance writes before it looks whether the table is pinned: soon enough
// that a pinned table's plans cost little (the time of such a plan grows
// with the table's rows times a batch's), late enough that the statistics
// then gathered describe more than a page.
const firstStatisticsLookAt = 100

// statisticsHold bounds how long the executor's batches wait for the
// attempts' look and a run for a pinned table (0.4-1.1 s on this
// machine): past it they go on, on the plans they have.
const statisticsHold = 3 * time.Second

// statisticsTimeout bounds one run of sp_updatestats (about 0.3 s at tens
// of thousands of rows: ANALYZE samples at most 30,000 rows of a table).
// On Babelfish a run also waits for each table's lock in turn, on every
// database of the server: a lock that conflicts with ANALYZE's, held by
// any session anywhere on it (a migration's, another ANALYZE's), holds the
// run up until it is released. Past the bound the run fails, and
// autovacuum gathers the statistics in its own time.
const statisticsTimeout = time.Minute

// updateStatisticsSQL gathers the statistics of every table of the
// database.
const updateStatisticsSQL = `EXEC sp_updatestats`

// statisticsNeed is what a look found about the executor's tables, the
// worse of the two.
type statisticsNeed int

const (
	// statisticsKept: both tables hold rows and have statistics of rows.
	statisticsKept statisticsNeed = iota
	// statisticsEmpty: a table holds no rows yet; the other has statistics
	// of rows or none either.
	statisticsEmpty
	// statisticsMissing: a table holds rows but has no statistics of
	// rows: it was never analyzed, or analyzed while it had no pages, and
	// PostgreSQL plans it from its pages and its rows' width.
	statisticsMissing
	// statisticsPinned: a table holds rows but was analyzed while it had
	// pages and no live rows, and is planned as empty at any size.
	statisticsPinned
)

// statisticsNeedSQL answers the statisticsNeed: PostgreSQL's reltuples is
// -1 before a table's first ANALYZE and the live rows it found after one,
// relpages the pages it found. Babelfish serves pg_catalog to T-SQL, and
// its OBJECT_ID is the table's oid; the statement runs only there.
const statisticsNeedSQL = `SELECT MAX(t.need) FROM (
    SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM dbo.submission_intents) THEN 1
                WHEN c.reltuples > 0 THEN 0 WHEN c.relpages > 0 THEN 3 ELSE 2 END AS need
    FROM pg_catalog.pg_class AS c WHERE c.oid = OBJECT_ID('dbo.submission_intents')
    UNION ALL
    SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM dbo.submission_attempts) THEN 1
                WHEN c.reltuples > 0 THEN 0 WHEN c.relpages > 0 THEN 3 ELSE 2 END
    FROM pg_catalog.pg_class AS c WHERE c.oid = OBJECT_ID('dbo.submission_attempts')) AS t`

// statistics counts the rows written through one DB and runs
// sp_updatestats, one run at a time, when the count reaches next. close
// stops a run under way and waits for it.
type statistics struct {
	// need looks at the executor's tables' statistics, and update runs
	// sp_updatestats (newStatistics), or a test's stand-ins.
	need   func(context.Context) (statisticsNeed, error)
	update func(context.Context) error
	log    *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	runs   sync.WaitGroup

	// pinned holds, while the attempts' look or a run for a pinned table
	// is under way, the hold that makes the executor's batches wait
	// (unpinned).
	pinned atomic.Pointer[statisticsHeld]

	// off is set once the counter will never run again (the engine
	// gathers its own statistics, or the tables have theirs), so that
	// every later write skips mu: the executor's batches and each
	// submission write through here.
	off atomic.Bool

	mu       sync.Mutex
	written  int
	attempts int // rows of submission_attempts among written
	next     int // 0: never (the engine gathers its own)
	// attemptsLooked is set once the attempts' count has brought its look
	// (firstStatisticsLookAt).
	attemptsLooked bool
	running        bool
}

// newStatistics returns the counter that asks on exec whether a run is
// needed and runs sp_updatestats on plain; on an engine that gathers its
// own statistics it counts nothing and never runs. The question goes to
// the executor's fourth pool, whose connection a leader warmed for it
// (warmStartReads): on a new connection of goose's pool, which keeps none,
// its first parse cost Babelfish 0.27-0.35 s of CPU, and 1.4 s of a fresh
// leader's first seconds at 500 intents/s went to it; on the query pool it
// waited for the pool's warm-up (WarmQueries holds every connection until
// all are warm), and a fresh leader's batches, held for the attempts' look,
// stood still 2 s after its first reservations. An instance that never
// leads (--api-only) opens a connection there for its looks, which end
// once the tables have statistics. sp_updatestats runs for a second or
// more under load, so it keeps off both.
func newStatistics(exec, plain *sql.DB, eng engine, log *slog.Logger) *statistics {
	need := func(ctx context.Context) (statisticsNeed, error) {
		var n statisticsNeed
		err := exec.QueryRowContext(ctx, statisticsNeedSQL).Scan(&n)
		return n, mapError(err)
	}
	update := func(ctx context.Context) error {
		_, err := plain.ExecContext(ctx, updateStatisticsSQL)
		return mapError(err)
	}
	return startStatistics(need, update, eng.gathersStatistics, log)
}

// startStatistics is newStatistics with the run's statements given.
func startStatistics(need func(context.Context) (statisticsNeed, error), update func(context.Context) error, gather bool, log *slog.Logger) *statistics {
	ctx, cancel := context.WithCancel(context.Background())
	s := &statistics{need: need, update: update, log: log, ctx: ctx, cancel: cancel}
	if gather {
		s.next = firstStatisticsAt
	} else {
		s.off.Store(true)
	}
	return s
}

// wrote counts rows written (inserted or updated) and starts a look when
// the count has reached the next threshold and no run is under way; one
// that is due while a run is under way waits for the next write after it.
func (s *statistics) wrote(rows int) { s.count(rows, 0) }

// wroteAttempts is wrote for rows of submission_attempts, which also bring
// the look at firstStatisticsLookAt of them.
func (s *statistics) wroteAttempts(rows int) { s.count(rows, rows) }

// count is wrote and wroteAttempts: a look is due at the next threshold of
// rows, or at the attempts' first look.
func (s *statistics) count(rows, attempts int) {
	if s.off.Load() || rows <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == 0 {
		return
	}
	s.written += rows
	s.attempts += attempts
	lookAtAttempts := !s.attemptsLooked && s.attempts >= firstStatisticsLookAt
	if s.running || (s.written < s.next && !lookAtAttempts) || s.ctx.Err() != nil {
		return
	}
	s.running = true
	s.attemptsLooked = s.attemptsLooked || lookAtAttempts
	written := s.written
	if written >= s.next {
		s.next = statisticsGrowth * written
	}
	var held func()
	if lookAtAttempts {
		// The executor's batches hold from here, not from the look's
		// answer: the look is a statement too (a first parse on its
		// connection, tenths of a second on a busy server), and a results
		// batch sent meanwhile was planned on a pinned table and took
		// 7.5 s (docs/sqlserver.md, "Statistics"). A look that finds no
		// pin releases them at once.
		held = s.hold()
	}
	s.runs.Go(func() { s.run(written, held) })
}

// statisticsHeld is one hold of the executor's batches: until ended is
// closed, and no later than until, so that a look or a run that hangs
// costs the batches statisticsHold once, not at every batch.
type statisticsHeld struct {
	ended chan struct{}
	until time.Time
}

// hold makes the executor's batches wait (unpinned) until the function it
// returns is called, statisticsHold at most.
func (s *statistics) hold() func() {
	h := &statisticsHeld{ended: make(chan struct{}), until: time.Now().Add(statisticsHold)}
	s.pinned.Store(h)
	return func() {
		s.pinned.Store(nil)
		close(h.ended)
	}
}

// run looks at the statistics with written rows counted, and runs
// sp_updatestats when a table is pinned, or when one holds rows but no
// statistics of them and the count has reached firstStatisticsAt. Once
// both tables hold rows and have statistics of them (another instance, or
// autovacuum, gathered them), it runs nothing, now or later, and leaves
// them to autovacuum. A failure costs only the statistics: the next
// threshold stands, and autovacuum still gathers them in time. held, when
// not nil, ends the hold its trigger began (count); the executor's
// batches are held after the look's answer only while a run for a pinned
// table is under way.
func (s *statistics) run(written int, held func()) {
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
	need, err := s.need(ctx)
	switch {
	case need == statisticsPinned && held == nil:
		// The executor's writes hold until the run lands (unpinned).
		held = s.hold()
	case need != statisticsPinned && held != nil:
		held()
		held = nil
	}
	if held != nil {
		defer held()
	}
	switch {
	case err != nil && written < firstStatisticsAt:
		return
	case err != nil:
		// Not known: run, as a table may lack them.
	case need == statisticsKept:
		done = true
		return
	case need == statisticsEmpty:
		return
	case need == statisticsMissing && written < firstStatisticsAt:
		return
	}
	start := time.Now()
	if err := s.update(ctx); err != nil {
		if s.ctx.Err() == nil {
			s.log.WarnContext(ctx, "statistics_update_failed", "error", err.Error())
		}
		return
	}
	s.log.DebugContext(ctx, "statistics_updated", "need", int(need), "took", time.Since(start))
}

// warmLook asks the look's question once, so that the connection it ran
// on has parsed it before the attempts' look holds the executor's batches
// for its answer (warmStartReads); once the counter is off no look will
// come, and it asks nothing.
func (s *statistics) warmLook(ctx context.Context) error {
	if s.off.Load() {
		return nil
	}
	_, err := s.need(ctx)
	return err
}

// unpinned waits while the attempts' look or a run for a pinned table is
// under way, until statisticsHold after it began at most: the executor's
// batches sent meanwhile would be planned with the table as empty (a
// results batch of a few hundred took seconds so), and those that wait
// for the run are planned from its statistics. Otherwise it returns at
// once.
func (s *statistics) unpinned(ctx context.Context) {
	h := s.pinned.Load()
	if h == nil {
		return
	}
	t := time.NewTimer(time.Until(h.until))
	defer t.Stop()
	select {
	case <-h.ended:
	case <-t.C:
	case <-ctx.Done():
	}
}

// close stops a run under way and waits for it. It cancels under mu, so
// that no write starts a run once Wait may have begun.
func (s *statistics) close() {
	s.mu.Lock()
	s.cancel()
	s.mu.Unlock()
	s.runs.Wait()
}

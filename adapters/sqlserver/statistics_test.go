package sqlserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// TestStatisticsRunAsRowsGrow drives the counter with stand-ins for the
// check and sp_updatestats: the first run at firstStatisticsAt rows
// written, the next when the count has grown statisticsGrowth times since
// a run began, none while one is under way, none once every table has
// statistics, and none at all where the engine gathers its own.
func TestStatisticsRunAsRowsGrow(t *testing.T) {
	var runs atomic.Int32
	release := make(chan struct{})
	var analyzed atomic.Bool
	s := startStatistics(func(context.Context) (statisticsNeed, error) {
		if analyzed.Load() {
			return statisticsKept, nil
		}
		return statisticsMissing, nil
	}, func(context.Context) error {
		runs.Add(1)
		<-release
		return nil
	}, true, slog.New(slog.DiscardHandler))
	defer s.close()
	settled := func(want int32) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); runs.Load() != want && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		if got := runs.Load(); got != want {
			t.Fatalf("%d runs, want %d", got, want)
		}
	}
	idle := func() { t.Helper(); idleStatistics(t, s) }
	first := firstStatisticsAt
	s.wrote(first - 1)
	settled(0)
	s.wrote(1) // the first run
	settled(1)
	s.wrote(statisticsGrowth*first + 1) // past the next threshold, but a run is under way
	settled(1)
	release <- struct{}{}
	idle()
	written := first + statisticsGrowth*first + 1
	s.wrote(1) // the threshold passed while the run was under way
	written++
	settled(2)
	release <- struct{}{}
	idle()
	s.wrote(statisticsGrowth*written - written - 1) // one short of the next
	settled(2)
	s.wrote(1)
	settled(3)
	release <- struct{}{}
	idle()
	// Every table has statistics of rows now: the next threshold checks,
	// runs nothing, and the counter stops for good.
	analyzed.Store(true)
	s.wrote(1 << 30)
	idle()
	s.wrote(1 << 30)
	idle()
	settled(3)
	if s.next != 0 || !s.off.Load() {
		t.Fatalf("the counter still waits for %d rows once every table has statistics (off: %v)", s.next, s.off.Load())
	}

	var never atomic.Int32
	off := startStatistics(func(context.Context) (statisticsNeed, error) { return statisticsPinned, nil }, func(context.Context) error { never.Add(1); return nil }, false, slog.New(slog.DiscardHandler))
	off.wrote(1 << 20)
	off.close()
	if never.Load() != 0 || !off.off.Load() {
		t.Fatalf("statistics ran %d times where the engine gathers its own (off: %v)", never.Load(), off.off.Load())
	}
}

// TestStatisticsLookAtTheFirstAttempts drives the counter with stand-ins:
// an instance's first firstStatisticsLookAt attempts bring a look whatever
// the count of rows, which runs sp_updatestats only for a pinned table; a
// look that finds a table still empty runs nothing and leaves the counter
// on, so that the look at the attempts still comes.
func TestStatisticsLookAtTheFirstAttempts(t *testing.T) {
	for _, c := range []struct {
		need     statisticsNeed
		wantRuns int32
	}{
		{statisticsPinned, 1},
		{statisticsMissing, 0},
		{statisticsEmpty, 0},
		{statisticsKept, 0},
	} {
		var looks, runs atomic.Int32
		s := startStatistics(func(context.Context) (statisticsNeed, error) {
			looks.Add(1)
			return c.need, nil
		}, func(context.Context) error {
			runs.Add(1)
			return nil
		}, true, slog.New(slog.DiscardHandler))
		s.wroteAttempts(firstStatisticsLookAt - 1)
		s.wrote(50) // rows of intents alone bring no look
		s.close()
		if looks.Load() != 0 {
			t.Fatalf("need %d: %d looks before %d attempts", c.need, looks.Load(), firstStatisticsLookAt)
		}
		s = startStatistics(s.need, s.update, true, slog.New(slog.DiscardHandler))
		s.wroteAttempts(firstStatisticsLookAt)
		s.close()
		if looks.Load() != 1 || runs.Load() != c.wantRuns {
			t.Fatalf("need %d at %d attempts: %d looks and %d runs, want 1 and %d",
				c.need, firstStatisticsLookAt, looks.Load(), runs.Load(), c.wantRuns)
		}
		if off := s.off.Load(); off != (c.need == statisticsKept) {
			t.Errorf("need %d: the counter is off: %v", c.need, off)
		}
	}

	// A table still empty at a threshold: the look runs nothing, and the
	// counter looks again at the next, and at the first attempts.
	var looks atomic.Int32
	s := startStatistics(func(context.Context) (statisticsNeed, error) {
		looks.Add(1)
		return statisticsEmpty, nil
	}, func(context.Context) error { return nil }, true, slog.New(slog.DiscardHandler))
	defer s.close()
	for want, rows := range []int{firstStatisticsAt, statisticsGrowth * firstStatisticsAt} {
		s.mu.Lock()
		written := s.written
		s.mu.Unlock()
		s.wrote(rows - written)
		waitLooks(t, &looks, int32(want+1))
		idleStatistics(t, s)
	}
	s.wroteAttempts(firstStatisticsLookAt)
	waitLooks(t, &looks, 3)
}

// waitLooks waits until looks reaches want.
func waitLooks(t *testing.T, looks *atomic.Int32, want int32) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); looks.Load() != want; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d looks, want %d", looks.Load(), want)
		}
	}
}

// statisticsRunning reports whether a run of s is under way.
func statisticsRunning(s *statistics) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// idleStatistics waits until no run of s is under way.
func idleStatistics(t *testing.T, s *statistics) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if !statisticsRunning(s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the run did not end")
		}
	}
}

// TestStatisticsGatheredAsIntentsArrive writes firstStatisticsAt intents
// into a new database through the store and finds, on Babelfish, that
// PostgreSQL has analyzed submission_intents since (pg_stat_user_tables, which Babelfish
// serves to T-SQL; OBJECT_ID there is the table's oid). SQL Server gathers
// its own statistics, and the adapter asks for none there.
func TestStatisticsGatheredAsIntentsArrive(t *testing.T) {
	// A new database: one reused from another test keeps the statistics
	// its tables had before they were emptied.
	db := openTestDB(t, freshDatabase(t, databaseOptions{}))
	if err := db.Migrate(context.Background(), "up"); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	if !db.engine.gathersStatistics {
		if db.stats.next != 0 {
			t.Fatalf("the adapter would gather statistics on SQL Server (next run at %d rows)", db.stats.next)
		}
		return
	}
	ctx := context.Background()
	analyzed := func() int {
		t.Helper()
		var n int
		err := db.queries.QueryRowContext(ctx, `SELECT COALESCE(MAX(analyze_count), 0) FROM pg_catalog.pg_stat_user_tables WHERE relid = OBJECT_ID('dbo.submission_intents')`).Scan(&n)
		if err != nil {
			t.Fatalf("read the table's analyze count: %v", err)
		}
		return n
	}
	before := analyzed()
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	batch := make([]core.Intent, firstStatisticsAt)
	for i := range batch {
		batch[i] = core.NewIntent(fmt.Sprintf("statistics-%d", i), testContract, json.RawMessage(`{}`), created)
	}
	if _, err := db.Store().CreateIntents(ctx, batch); err != nil {
		t.Fatal(err)
	}
	waitStatisticsRun(t, db)
	// The run's backend reports its ANALYZE to pg_stat_user_tables when
	// it goes idle, at most once a second.
	for deadline := time.Now().Add(15 * time.Second); analyzed() == before; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("submission_intents not analyzed by the run at %d intents written (analyze count %d)", firstStatisticsAt, before)
		}
	}
}

// waitStatisticsRun waits for the run that the write before it began, to
// its own bound (statisticsTimeout), rather than for a time of its own:
// Babelfish's sp_updatestats is an ANALYZE of every table on the server,
// which waits for each table's lock in turn (a probe's SHARE lock on a
// table of another schema held a run up for 32 s), and under CI's load a
// run once took more than the 30 s the test gave it. While it waits it
// logs what the run waits for, once, so that a slow run says why.
func waitStatisticsRun(t *testing.T, db *DB) {
	t.Helper()
	start := time.Now()
	logged := false
	for {
		if !statisticsRunning(db.stats) {
			return
		}
		if waited := time.Since(start); waited > statisticsTimeout+10*time.Second {
			t.Fatalf("the statistics run did not end within %s", waited.Round(time.Second))
		} else if !logged && waited > 10*time.Second {
			logged = true
			t.Logf("the statistics run has waited %s: %s", waited.Round(time.Second), statisticsRunWaits(db))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// statisticsRunWaits describes, from pg_stat_activity, what the sessions
// running sp_updatestats wait for and the statements of those blocking them.
func statisticsRunWaits(db *DB) string {
	// T-SQL has no ANY over an array: the blockers' pids are matched in
	// their text.
	rows, err := db.queries.QueryContext(context.Background(), `SELECT CONCAT(a.pid, ' waits on ', a.wait_event_type, '/', a.wait_event,
	' behind ', b.pid, ' (', b.state, '): ', LEFT(b.query, 120))
FROM pg_catalog.pg_stat_activity AS a
LEFT JOIN pg_catalog.pg_stat_activity AS b
	ON CHARINDEX(CONCAT(',', b.pid, ','), CONCAT(',', pg_catalog.array_to_string(pg_catalog.pg_blocking_pids(a.pid), ','), ',')) > 0
WHERE a.query LIKE CONCAT($1, '%') AND a.state = 'active'`, updateStatisticsSQL)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	defer rows.Close()
	var waits []string
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			return "(" + err.Error() + ")"
		}
		waits = append(waits, w)
	}
	return fmt.Sprint(waits)
}

// withoutStatistics stops db gathering statistics (statistics.go), for the
// tests that count the store's own requests or scans: the check and the
// run would land in whichever operation crossed a threshold.
// TestStatisticsGatheredAsIntentsArrive covers them.
func withoutStatistics(db *DB) {
	db.stats.close()
	db.stats = startStatistics(nil, nil, false, db.log)
}

// TestStatisticsHoldWritesWhileUnpinning drives the counter with stand-ins:
// while a run for a pinned table is under way, unpinned waits until it
// ends, and returns at once without one, or for a table only missing its
// statistics.
func TestStatisticsHoldWritesWhileUnpinning(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	var released sync.Once
	started := make(chan struct{}, 1)
	s := startStatistics(func(context.Context) (statisticsNeed, error) { return statisticsPinned, nil }, func(context.Context) error {
		started <- struct{}{}
		<-release
		return nil
	}, true, slog.New(slog.DiscardHandler))
	defer func() {
		released.Do(func() { close(release) })
		s.close()
	}()
	s.unpinned(ctx) // no run: at once
	s.wroteAttempts(firstStatisticsLookAt)
	<-started
	holdsUntil(t, s, "the pinned table's run", func() { released.Do(func() { close(release) }) }, "the run ended")

	missing := startStatistics(func(context.Context) (statisticsNeed, error) { return statisticsMissing, nil }, func(context.Context) error {
		t.Error("a run for a table only missing its statistics before firstStatisticsAt")
		return nil
	}, true, slog.New(slog.DiscardHandler))
	missing.wroteAttempts(firstStatisticsLookAt)
	idleStatistics(t, missing)
	missing.unpinned(ctx)
	missing.close()
}

// TestStatisticsHoldWritesFromTheAttemptsLook: the executor's batches wait
// from the moment the attempts' count brings its look, not from the look's
// answer, since a batch sent while the look's statement ran met the pinned
// plan; a look that finds no pin releases them at once, and runs nothing.
func TestStatisticsHoldWritesFromTheAttemptsLook(t *testing.T) {
	ctx := context.Background()
	// Closed, it answers statisticsKept (the zero value), also when the
	// test fails before it answers, so that close does not wait forever.
	answer := make(chan statisticsNeed)
	var answered sync.Once
	s := startStatistics(func(context.Context) (statisticsNeed, error) { return <-answer, nil }, func(context.Context) error {
		t.Error("a run although the look found the statistics kept")
		return nil
	}, true, slog.New(slog.DiscardHandler))
	defer func() {
		answered.Do(func() { close(answer) })
		s.close()
	}()
	s.wroteAttempts(firstStatisticsLookAt - 1)
	s.unpinned(ctx) // no look yet: at once
	s.wroteAttempts(1)
	holdsUntil(t, s, "the attempts' look", func() { answered.Do(func() { close(answer) }) }, "the look found no pin")
	idleStatistics(t, s)
	s.unpinned(ctx)
}

// holdsUntil checks that a write waits (unpinned) while what during names
// is under way, and goes on once end has been called (after names what
// that stands for).
func holdsUntil(t *testing.T, s *statistics, during string, end func(), after string) {
	t.Helper()
	held := make(chan struct{})
	go func() {
		s.unpinned(context.Background())
		close(held)
	}()
	select {
	case <-held:
		t.Fatalf("a write went on while %s was under way", during)
	case <-time.After(50 * time.Millisecond):
	}
	end()
	select {
	case <-held:
	case <-time.After(statisticsHold / 2):
		t.Fatalf("a write still held after %s", after)
	}
}

// TestStatisticsHoldEndsOnce: a look that never answers holds the
// executor's batches statisticsHold from its start, once: a batch sent
// after that goes on at once rather than waiting a hold of its own.
func TestStatisticsHoldEndsOnce(t *testing.T) {
	ctx := context.Background()
	answer := make(chan statisticsNeed)
	s := startStatistics(func(ctx context.Context) (statisticsNeed, error) {
		select {
		case n := <-answer:
			return n, nil
		case <-ctx.Done():
			return statisticsKept, ctx.Err()
		}
	}, func(context.Context) error { return nil }, true, slog.New(slog.DiscardHandler))
	defer s.close()
	start := time.Now()
	s.wroteAttempts(firstStatisticsLookAt)
	s.unpinned(ctx)
	if waited := time.Since(start); waited < statisticsHold/2 || waited > 2*statisticsHold {
		t.Fatalf("the first batch waited %v, want about statisticsHold (%v)", waited, statisticsHold)
	}
	next := time.Now()
	s.unpinned(ctx)
	if waited := time.Since(next); waited > statisticsHold/4 {
		t.Fatalf("a batch after the hold's end waited %v: each batch held anew", waited)
	}
}

// TestStatisticsWarmLookAsksWhileALookMayCome: the warm-up asks the look's
// question while the counter may still look, and nothing once it is off.
func TestStatisticsWarmLookAsksWhileALookMayCome(t *testing.T) {
	var looks atomic.Int32
	need := func(context.Context) (statisticsNeed, error) {
		looks.Add(1)
		return statisticsKept, nil
	}
	never := func(context.Context) error {
		t.Error("the warm-up ran sp_updatestats")
		return nil
	}
	on := startStatistics(need, never, true, slog.New(slog.DiscardHandler))
	defer on.close()
	if err := on.warmLook(context.Background()); err != nil || looks.Load() != 1 {
		t.Fatalf("warm-up while a look may come: %v, %d looks, want 1", err, looks.Load())
	}
	if on.off.Load() {
		t.Error("the warm-up's answer turned the counter off; only a look's does")
	}
	off := startStatistics(need, never, false, slog.New(slog.DiscardHandler))
	defer off.close()
	if err := off.warmLook(context.Background()); err != nil || looks.Load() != 1 {
		t.Fatalf("warm-up of a counter that is off: %v, %d looks, want none", err, looks.Load())
	}
}

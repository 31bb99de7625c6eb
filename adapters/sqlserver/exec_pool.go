package sqlserver

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The executor's pools. The leader's reads of due intents (GetIntents),
// its reservations (StartAttempts) and its results (FinishAttempts) each
// run on a pool of their own, a lane, which the instance keeps warm while
// it follows, so that a new leader's first calls do not pay a connection's
// first call of their procedures: Babelfish compiles a procedure on each
// connection's first call of it, about 0.6 s of its CPU for each of the two
// batches on a 2-core machine. With one pool for the three, any connection
// came to serve each kind (database/sql hands out the most recently used
// first), so the warm-up compiled every procedure on three connections,
// and a fourth that the executor's other reads opened mid-drain compiled
// them all again under the load. With a lane per kind, each connection
// compiles only its own kind's calls. The executor's other calls (its
// rebuild, its refresh of changes, its reads of single intents) have a
// fourth pool, so that they never take a lane's warm connection.

// lane is one kind of call the executor has under way, on a pool of its
// own (DB.lanes).
type lane int

const (
	laneDue          lane = iota // reads of due intents
	laneReservations             // fenced batches of reservations
	laneResults                  // fenced batches of results
	laneCount
)

// The fence of a warm-up's batches: a lease of its own, created in the
// warm-up's transaction and rolled back with it (warmBatchLane).
const (
	warmLeasePrefix = "submission-manager/warm-up/"
	warmHolder      = "warm-up"
)

// openExecPool opens one of the executor's pools on the queries' connector,
// sized like the queries' pool (only what the executor has under way is
// opened), resetting a session only when needed (keepsession.go). The
// tests count the four as one, poolExecutor.
func openExecPool(conns connectors, cfg Config) *sql.DB {
	pool := sql.OpenDB(cfg.connector(poolExecutor, keepSession(conns.queries)))
	pool.SetMaxOpenConns(cfg.MaxOpenConns)
	pool.SetMaxIdleConns(cfg.MaxIdleConns)
	pool.SetConnMaxLifetime(cfg.ConnMaxLifetime)
	return pool
}

// execWarmth remembers when the executor's lanes were last warmed.
type execWarmth struct {
	mu sync.Mutex
	// triedAt is when the last warm-up began (the monotonic clock; zero
	// before the first).
	triedAt time.Time
}

// due reports whether a warm-up is due (none tried in the last every) and,
// when it is, counts it as tried now.
func (w *execWarmth) due(every time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.triedAt.IsZero() && time.Since(w.triedAt) < every {
		return false
	}
	w.triedAt = time.Now()
	return true
}

// warmExecutor warms one connection of each lane at once, and one of the
// executor's fourth pool, and reports their errors: the reads of due
// intents on theirs, a reservation on the reservations', a result on the
// results', and a new leader's first reads on the fourth (warmStartReads).
// It is the follower's (leaseStore.Acquire) and serve's (WarmExecution): a
// leader's connections are warm by its own use.
func (db *DB) warmExecutor(ctx context.Context) error {
	return concurrently(
		func() error { return db.warmDueLane(ctx) },
		func() error { return db.warmBatchLane(ctx, laneReservations) },
		func() error { return db.warmBatchLane(ctx, laneResults) },
		func() error { return db.warmStartReads(ctx) },
	)
}

// warmStartReads runs a new leader's reads before its first attempt (the
// schedule's rebuild: the change cursor and the pending intents; then the
// gateway pauses) on one connection of the executor's fourth pool, which
// they take at a takeover, and the statistics' look at its first attempts
// while one may still come (statistics.go). A new leader otherwise logged
// in there first: its executor started 0.29 to 0.52 s after the takeover
// on a quiet 2-core machine, and 0.43 to 1.86 s beside other load on
// Babelfish.
func (db *DB) warmStartReads(ctx context.Context) error {
	s := db.storeOn(db.exec)
	if _, err := s.LatestChange(ctx); err != nil {
		return err
	}
	if _, err := s.ListPending(ctx, ports.ListPendingParams{Limit: 1}); err != nil {
		return err
	}
	if _, err := s.ListPauses(ctx); err != nil {
		return err
	}
	return db.stats.warmLook(ctx)
}

// warmDueLane reads no intent on a connection of the due intents' lane,
// through the leader's own read of them.
func (db *DB) warmDueLane(ctx context.Context) error {
	_, err := db.intentsWithDetails(ctx, nil)
	return err
}

// concurrently runs each of fns in a goroutine of its own, waits for all
// of them and joins their errors.
func concurrently(fns ...func() error) error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() { errs[i] = fn() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// warmBatchLane runs the lane's batch on one connection of it all the way
// through, inside a transaction that first creates a lease of its own (a
// random name, so nobody waits for its row or its lock) for the batch to be
// fenced by and an intent for it to apply to (warmItems), and that rolls
// everything back. A batch fenced out stops at its fence check, and
// Babelfish plans a procedure's statements at their first execution on a
// connection, so a warm-up that stopped there left the batch's own
// statements to the leader's first batches (0.3 to 0.6 s each, measured
// under load).
func (db *DB) warmBatchLane(ctx context.Context, l lane) error {
	conn, err := db.lanes[l].Conn(ctx)
	if err != nil {
		return mapError(err)
	}
	defer func() { _ = conn.Close() }()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	fence := core.Fence{LeaseName: warmLeasePrefix + hex.EncodeToString(b), HolderID: warmHolder, Epoch: 1}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return mapError(err)
	}
	defer func() { _ = tx.Rollback() }()
	err = db.q.WithTx(tx).InsertLease(ctx, sqlserverdb.InsertLeaseParams{
		LeaseName: fence.LeaseName, HolderID: fence.HolderID, DurationMs: int32(time.Hour.Milliseconds())})
	if err != nil {
		return mapError(err)
	}
	now := time.Now()
	in, err := warmIntentParams(now)
	if err != nil {
		return err
	}
	in.IntentID = fence.LeaseName + `/"`
	if err := db.q.WithTx(tx).InsertIntent(ctx, in); err != nil {
		return mapError(err)
	}
	starts, finishes, err := warmItems(fence, in.IntentID, now)
	if err != nil {
		return err
	}
	name, batch, items := "reservation", startAttempts, starts
	if l == laneResults {
		// The attempt the result closes is opened by plain statements: a
		// reservation here would compile its procedure on this lane's
		// connection too (about 0.6 s of Babelfish's CPU), for nothing.
		if _, err := tx.ExecContext(ctx, warmOpenAttemptSQL, setString(in.IntentID), fence.HolderID, fence.Epoch, dbTime(now)); err != nil {
			return mapError(err)
		}
		name, batch, items = "result", finishAttempts, finishes
	}
	// Rolled back with the lease, the intent and its attempt.
	verdicts, err := db.runFencedBatchOn(ctx, tx, batch, fence, items, []int{0})
	if err != nil {
		return err
	}
	if v, ok := verdicts[0]; !ok || v != verdictApplied {
		return fmt.Errorf("sqlserver: the warm-up's %s did not apply (verdict %d, answered %v)", name, v, ok)
	}
	return nil
}

// warmOpenAttemptSQL opens attempt 1 of the warm-up's intent ($1), as a
// reservation by holder $2 at epoch $3 would at $4, for the results'
// lane's warm-up to close.
const warmOpenAttemptSQL = `UPDATE submission_intents SET attempt_count = 1 WHERE intent_id = $1;
INSERT INTO submission_attempts (intent_id, attempt_number, holder_id, lease_epoch, started_at, sent)
VALUES ($1, 1, $2, $3, CAST($4 AS datetime2(7)), 1)`

// warmItems are the warm-up's reservation and result of the attempt of the
// intent it created, which both apply. A batch that applies nothing is not
// enough: its statements that only write the items found to apply are
// planned for none (the list of them is NULL, which PostgreSQL folds into
// a plan without the items' table function), and the leader's first
// result on each connection then took 494 ms against 17 ms for the next
// (BenchmarkFirstBatchesAfterWarmUp, this machine), which fell on a fresh
// leader's first second of load. The intent's key has a quote,
// which jsonText spells, so the items take the spelled path too
// (dbo.submission_json_text, compiled at its first call). No other session
// sees the intent; on SQL Server a locking read that reaches its row (a
// listing of the newest intents at READ COMMITTED) waits for the rollback,
// milliseconds later, as it would for a submission's insert.
func warmItems(fence core.Fence, id string, now time.Time) (starts, finishes string, err error) {
	o := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonProviderFailure, MessageID: `"`}
	start := startItemOf(0, ports.StartAttemptParams{Fence: fence, IntentID: id, Number: 1, StartedAt: now}, 1)
	finish := finishItemOf(0, 0, ports.FinishAttemptParams{Fence: fence, IntentID: id, Number: 1, FinishedAt: now,
		Outcome: &o, Sent: true, Error: `"`,
		Decision: core.Decision{Status: core.StatusRejected, FinalOutcome: &o}}, 1)
	if starts, err = itemsJSON([]any{start}); err != nil {
		return "", "", err
	}
	finishes, err = itemsJSON([]any{finish})
	return starts, finishes, err
}

// keepExecutorWarm warms the executor's lanes from a follower's acquire that
// found the lease held by another instance far from its expiry
// (farFromExpiry), when a warm-up is due, so that the warm-up (about a
// second of Babelfish's CPU on a 2-core machine) never delays a takeover
// that is near. It waits for the warm-up, bounded by half the duration
// whatever the acquire's own bound, and tries again only a warm-up period
// later whatever came of it: a failure costs one log line, and a warm-up
// cut short would only be repeated at every tick.
func (db *DB) keepExecutorWarm(ctx context.Context, duration time.Duration) {
	if !db.warmth.due(db.warmEvery()) {
		return
	}
	warmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), duration/2)
	defer cancel()
	if err := db.warmExecutor(warmCtx); err != nil {
		db.log.WarnContext(ctx, "the executor's connections were not warmed", "err", err)
	}
}

// warmEvery is how often a follower warms the executor's lanes: three times
// per connection lifetime, so a connection that a lane recycled is warm
// again within a third of that.
func (db *DB) warmEvery() time.Duration {
	return max(db.cfg.ConnMaxLifetime/3, time.Minute)
}

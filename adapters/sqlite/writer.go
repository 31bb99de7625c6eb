package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
)

// writeFunc is one caller's write. It runs inside a transaction shared with
// other callers' writes and must not keep anything from it but its result.
type writeFunc func(ctx context.Context, q *sqlitedb.Queries) error

// writeOp is a writeFunc waiting for its batch, and then for its answer.
type writeOp struct {
	ctx  context.Context
	name string
	fn   writeFunc
	// single says fn writes with at most one statement and refuses (returns
	// a core verdict) only before writing anything. SQLite's statement
	// atomicity then isolates it, and it runs without a savepoint.
	single bool
	// state is opQueued until either the writer claims the op to run it
	// (opRunning) or its caller, whose context ended, abandons it
	// (opAbandoned). Whoever moves it first decides: an abandoned op never
	// runs, and a caller whose op already runs waits for its answer, so fn
	// never touches the caller's variables after the caller returned.
	state atomic.Int32
	err   error
	done  chan struct{}
}

// The states of a writeOp.
const (
	opQueued int32 = iota
	opRunning
	opAbandoned
)

// groupCommitter owns the writer connection. Its goroutine takes every write
// submitted while the previous batch was committing, runs them in one
// transaction, and answers each caller with its own result once that
// transaction has committed. Under load one fsync thus covers many writes;
// with a single caller a batch is one write, as fast as a plain transaction.
//
// A write that fails must not take the others down. A multi-statement write
// runs inside its own SAVEPOINT and is rolled back to it when it fails. A
// single-statement write needs none: SQLite undoes a failed statement (a
// constraint violation) by itself, and a single write refuses before it
// writes. Savepoints cost a sub-journal copy of every page they touch, so
// intake (CreateIntent, one INSERT) and the lease go without. An error that
// can leave the transaction itself rolled back (I/O, disk full) fails the
// whole batch: none of it is committed, and every caller is told.
type groupCommitter struct {
	db       *sql.DB
	log      *slog.Logger
	maxBatch int

	ops     chan *writeOp
	quit    chan struct{}
	stopped chan struct{}
	stop    sync.Once

	// prepared holds the store's statements prepared on the writer
	// connection; nil until the schema exists (before the first Migrate).
	// Only the committer goroutine touches it.
	prepared *sqlitedb.Queries
}

func newGroupCommitter(db *sql.DB, log *slog.Logger, maxBatch int) *groupCommitter {
	w := &groupCommitter{
		db:       db,
		log:      log,
		maxBatch: maxBatch,
		ops:      make(chan *writeOp, maxBatch),
		quit:     make(chan struct{}),
		stopped:  make(chan struct{}),
	}
	go w.run()
	return w
}

// do submits fn and waits for its answer. When ctx ends while fn is still
// queued, do returns at once and fn never runs; when fn is already running,
// do waits for the batch (it runs under a context no caller cancels) and
// returns the true answer.
func (w *groupCommitter) do(ctx context.Context, name string, single bool, fn writeFunc) error {
	op := &writeOp{ctx: ctx, name: name, fn: fn, single: single, done: make(chan struct{})}
	select {
	case w.ops <- op:
	case <-w.quit:
		return storeError(name, errClosed)
	case <-ctx.Done():
		return storeError(name, ctx.Err())
	}
	select {
	case <-op.done:
		return op.err
	case <-w.stopped:
		// Stopped after taking op (then it is answered) or before (never).
		select {
		case <-op.done:
			return op.err
		default:
			return storeError(name, errClosed)
		}
	case <-ctx.Done():
		if op.state.CompareAndSwap(opQueued, opAbandoned) {
			return storeError(name, ctx.Err())
		}
		// The writer is running it in the current batch: its answer is
		// moments away and says whether it committed.
		<-op.done
		return op.err
	}
}

// close stops the goroutine after the batch in progress and answers every
// write still queued with core.ErrStoreUnavailable.
func (w *groupCommitter) close() error {
	w.stop.Do(func() { close(w.quit) })
	<-w.stopped
	if w.prepared != nil {
		return w.prepared.Close()
	}
	return nil
}

func (w *groupCommitter) run() {
	defer close(w.stopped)
	batch := make([]*writeOp, 0, w.maxBatch)
	for {
		// Stopping wins over more work, however busy the callers are.
		select {
		case <-w.quit:
			w.drain()
			return
		default:
		}
		select {
		case <-w.quit:
			w.drain()
			return
		case op := <-w.ops:
			batch = append(batch[:0], op)
		}
	gather:
		for len(batch) < w.maxBatch {
			select {
			case op := <-w.ops:
				batch = append(batch, op)
			default:
				break gather
			}
		}
		w.commit(batch)
		clear(batch)
	}
}

// drain answers the writes nobody will run.
func (w *groupCommitter) drain() {
	for {
		select {
		case op := <-w.ops:
			op.err = storeError(op.name, errClosed)
			close(op.done)
		default:
			return
		}
	}
}

// commit runs one batch in one transaction and answers its callers.
func (w *groupCommitter) commit(batch []*writeOp) {
	// Statements of the writer run under a context no caller can cancel:
	// interrupting one would roll back everybody's transaction.
	ctx := context.Background()
	q := w.queries(ctx)
	tx, err := w.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE, from the DSN
	if err != nil {
		w.fail(batch, fmt.Errorf("begin: %w", err))
		return
	}
	qtx := q.WithTx(tx)
	alone := len(batch) == 1
	for _, op := range batch {
		if err := op.ctx.Err(); err != nil && op.state.CompareAndSwap(opQueued, opAbandoned) {
			op.err = storeError(op.name, err) // its caller gave up: skip it
			continue
		}
		if !op.state.CompareAndSwap(opQueued, opRunning) {
			continue // abandoned by its caller, who has its answer
		}
		var broken error
		switch {
		case alone:
			// Alone in its batch: rolling back all rolls back just it.
			if err := op.fn(ctx, qtx); err != nil {
				rollback(tx, w.log)
				op.err = storeError(op.name, err)
				w.answer(batch)
				return
			}
		case op.single:
			broken = w.runSingle(ctx, qtx, op)
		default:
			broken = w.runIsolated(ctx, tx, qtx, op)
		}
		if broken != nil {
			rollback(tx, w.log)
			w.fail(batch, broken)
			return
		}
	}
	if err := tx.Commit(); err != nil {
		w.fail(batch, fmt.Errorf("commit: %w", err))
		return
	}
	w.answer(batch)
}

// runSingle runs a single-statement write. A verdict or a statement SQLite
// rolled back leaves the transaction as it was; any other error may have
// rolled it back, and runSingle returns it so the whole batch fails.
func (w *groupCommitter) runSingle(ctx context.Context, q *sqlitedb.Queries, op *writeOp) error {
	err := op.fn(ctx, q)
	op.err = storeError(op.name, err)
	if err == nil || isVerdict(err) || statementRolledBack(err) {
		return nil
	}
	return fmt.Errorf("%s: %w", op.name, err)
}

// runIsolated runs a multi-statement write inside a savepoint and rolls
// back to it when the write fails, keeping the batch's other writes. It
// returns an error only when the transaction itself is broken (the savepoint
// is gone) and the whole batch must fail.
func (w *groupCommitter) runIsolated(ctx context.Context, tx *sql.Tx, q *sqlitedb.Queries, op *writeOp) error {
	if _, err := tx.ExecContext(ctx, "SAVEPOINT write_op"); err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	if err := op.fn(ctx, q); err != nil {
		op.err = storeError(op.name, err)
		if _, err := tx.ExecContext(ctx, "ROLLBACK TO write_op"); err != nil {
			return fmt.Errorf("rolling back %s: %w", op.name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "RELEASE write_op"); err != nil {
		return fmt.Errorf("release after %s: %w", op.name, err)
	}
	return nil
}

// queries returns the prepared statements, preparing them once the schema
// exists; until then (or if preparing fails) statements are parsed per call.
func (w *groupCommitter) queries(ctx context.Context) *sqlitedb.Queries {
	if w.prepared != nil {
		return w.prepared
	}
	q, err := sqlitedb.Prepare(ctx, w.db)
	if err != nil {
		return sqlitedb.New(w.db)
	}
	w.prepared = q
	return q
}

// fail answers every write of the batch with the batch's error.
func (w *groupCommitter) fail(batch []*writeOp, err error) {
	w.log.Warn("write batch failed", "writes", len(batch), "err", err)
	for _, op := range batch {
		op.err = storeError(op.name, err)
	}
	w.answer(batch)
}

func (w *groupCommitter) answer(batch []*writeOp) {
	for _, op := range batch {
		close(op.done)
	}
}

func rollback(tx *sql.Tx, log *slog.Logger) {
	if err := tx.Rollback(); err != nil {
		log.Warn("rollback failed", "err", err)
	}
}

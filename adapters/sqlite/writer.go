package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
)

// writeKind says how a write may fail without failing the others of its
// batch, which is what lets every write run without a savepoint.
type writeKind uint8

const (
	// oneStatement writes with at most one statement and returns a verdict
	// (a core error about the request) only when nothing changed: before
	// that statement, or after it changed no row (an insert that met an
	// existing intentId). SQLite undoes a statement it refused (a
	// constraint), so such a failure, like a verdict, leaves the
	// transaction as it was.
	oneStatement writeKind = iota
	// verdictFirst may run several statements, but decides every verdict
	// before its first change: its first writing statement carries all the
	// conditions (fence, state) under which the rest must succeed. Any other
	// error after that point fails the whole batch, since part of the write
	// may already be in the transaction.
	verdictFirst
)

// writeOp is a writeFunc waiting for its batch, and then for its answer.
type writeOp struct {
	ctx  context.Context
	name string
	fn   writeFunc
	kind writeKind
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
// A write that fails must not take the others down, and savepoints, which
// would isolate any write, cost a sub-journal copy of every page they touch.
// So every write is written to refuse before it changes anything (see
// writeKind): a verdict, or a single statement SQLite undid, leaves the
// transaction intact and the batch goes on. An error that may leave part of
// a write behind, or the transaction itself rolled back (I/O, disk full),
// fails the whole batch: none of it is committed, and every caller is told.
type groupCommitter struct {
	db       *sql.DB
	log      *slog.Logger
	maxBatch int
	// now is the clock of the stamps (time.Now; tests set it).
	now func() time.Time

	ops chan *writeOp
	// leaseOps are the lease's writes: taken before any queued write and
	// committed alone (see doLease).
	leaseOps chan *writeOp
	quit     chan struct{}
	stopped  chan struct{}
	stop     sync.Once

	// onBatch, when set (by tests only), runs at the start of every
	// batch's transaction: it observes the order of writes, or plays a
	// slow disk.
	onBatch func(batch []*writeOp)

	// prepared holds the store's statements prepared on the writer
	// connection; nil until the schema exists (before the first Migrate).
	// Only the committer goroutine touches it.
	prepared *sqlitedb.Queries
	// rowInserts are the multi-row inserts of batch.go by row count,
	// prepared with the other statements. Only the committer goroutine
	// touches them.
	rowInserts rowInserts
}

func newGroupCommitter(db *sql.DB, log *slog.Logger, maxBatch int) *groupCommitter {
	w := &groupCommitter{
		db:       db,
		log:      log,
		maxBatch: maxBatch,
		now:      time.Now,
		ops:      make(chan *writeOp, maxBatch),
		leaseOps: make(chan *writeOp, 1),
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
func (w *groupCommitter) do(ctx context.Context, name string, kind writeKind, fn writeFunc) error {
	return w.submit(ctx, w.ops, name, kind, fn)
}

// submit hands fn to the writer on lane and waits for its answer, as do.
func (w *groupCommitter) submit(ctx context.Context, lane chan *writeOp, name string, kind writeKind, fn writeFunc) error {
	op, err := w.enqueue(ctx, lane, name, kind, fn)
	if err != nil {
		return err
	}
	return w.await(ctx, op)
}

// doAll submits every fn at once, so that they share a batch as far as the
// queue allows, and waits for every answer: one per fn, in order, each as
// do would give it.
func (w *groupCommitter) doAll(ctx context.Context, name string, kind writeKind, fns []writeFunc) []error {
	errs := make([]error, len(fns))
	ops := make([]*writeOp, len(fns))
	for i, fn := range fns {
		ops[i], errs[i] = w.enqueue(ctx, w.ops, name, kind, fn)
	}
	for i, op := range ops {
		if op != nil {
			errs[i] = w.await(ctx, op)
		}
	}
	return errs
}

// enqueue hands fn to the writer on lane without waiting for its answer.
func (w *groupCommitter) enqueue(ctx context.Context, lane chan *writeOp, name string, kind writeKind, fn writeFunc) (*writeOp, error) {
	op := &writeOp{ctx: ctx, name: name, fn: fn, kind: kind, done: make(chan struct{})}
	select {
	case lane <- op:
		return op, nil
	case <-w.quit:
		return nil, mapError(name, errClosed)
	case <-ctx.Done():
		return nil, mapError(name, ctx.Err())
	}
}

// await waits for the answer of an enqueued op. When ctx ends while op is
// still queued, await returns at once and op never runs; when op is already
// running, await waits for its batch and returns the true answer.
func (w *groupCommitter) await(ctx context.Context, op *writeOp) error {
	select {
	case <-op.done:
		return op.err
	case <-w.stopped:
		// Stopped after taking op (then it is answered) or before (never).
		select {
		case <-op.done:
			return op.err
		default:
			return mapError(op.name, errClosed)
		}
	case <-ctx.Done():
		if op.state.CompareAndSwap(opQueued, opAbandoned) {
			return mapError(op.name, ctx.Err())
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
	err := w.rowInserts.close()
	if w.prepared != nil {
		return errors.Join(err, w.prepared.Close())
	}
	return err
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
		// A lease write goes first, alone in its transaction.
		select {
		case op := <-w.leaseOps:
			w.commit(append(batch[:0], op))
			continue
		default:
		}
		select {
		case <-w.quit:
			w.drain()
			return
		case op := <-w.leaseOps:
			w.commit(append(batch[:0], op))
			continue
		case op := <-w.ops:
			batch = append(batch[:0], op)
		}
		batch = w.gather(batch)
		w.commit(batch)
		clear(batch)
	}
}

// gatherYields bounds how often gather yields the writer's thread.
const gatherYields = 3

// gather adds the queued writes to batch, up to maxBatch. While that finds
// more, it yields the thread and looks again (up to gatherYields times):
// under load the callers of the writes just answered are runnable, about to
// submit their next ones, and a write that joins this batch does not wait
// a whole commit for the next. Batches grow (at 64 clients from about 17
// writes to 26), so the same writes take a third fewer fsyncs; with a
// single caller the one yield finds nothing and costs nothing noticeable.
func (w *groupCommitter) gather(batch []*writeOp) []*writeOp {
	for yields := 0; ; yields++ {
		before := len(batch)
	take:
		for len(batch) < w.maxBatch {
			select {
			case op := <-w.ops:
				batch = append(batch, op)
			default:
				break take
			}
		}
		if len(batch) >= w.maxBatch || yields == gatherYields || (yields > 0 && len(batch) == before) {
			return batch
		}
		runtime.Gosched()
	}
}

// drain answers the writes nobody will run.
func (w *groupCommitter) drain() {
	for {
		select {
		case op := <-w.ops:
			op.err = mapError(op.name, errClosed)
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
	qtx := &writeTx{Queries: q.WithTx(tx), tx: tx, rows: w.rowInserts, now: w.now}
	if w.onBatch != nil {
		w.onBatch(batch)
	}
	alone := len(batch) == 1
	for _, op := range batch {
		if err := op.ctx.Err(); err != nil && op.state.CompareAndSwap(opQueued, opAbandoned) {
			op.err = mapError(op.name, err) // its caller gave up: skip it
			continue
		}
		if !op.state.CompareAndSwap(opQueued, opRunning) {
			continue // abandoned by its caller, who has its answer
		}
		if alone {
			// Alone in its batch: rolling back all rolls back just it.
			if err := op.fn(ctx, qtx); err != nil {
				rollback(tx, w.log)
				op.err = mapError(op.name, err)
				w.answer(batch)
				return
			}
			continue
		}
		if broken := w.runOne(ctx, qtx, op); broken != nil {
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

// runOne runs one write of a shared batch. A verdict, or a statement SQLite
// rolled back in a one-statement write, leaves the transaction as it was;
// any other error may have left part of the write in it (or rolled it back),
// and runOne returns it so that the whole batch fails.
func (w *groupCommitter) runOne(ctx context.Context, q *writeTx, op *writeOp) error {
	err := op.fn(ctx, q)
	op.err = mapError(op.name, err)
	if err == nil || isVerdict(err) || (op.kind == oneStatement && statementRolledBack(err)) {
		return nil
	}
	return fmt.Errorf("%s: %w", op.name, err)
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
	w.rowInserts = prepareRowInserts(ctx, w.db)
	return q
}

// fail answers every write of the batch with the batch's error.
func (w *groupCommitter) fail(batch []*writeOp, err error) {
	w.log.Warn("write batch failed", "writes", len(batch), "err", err)
	for _, op := range batch {
		op.err = mapError(op.name, err)
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

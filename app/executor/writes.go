package executor

import (
	"context"
	"sync"

	"github.com/submissionmanager/submission-manager/app/clockctx"
	"github.com/submissionmanager/submission-manager/ports"
)

// The fenced writes of one moment go to the store together: the
// reservations that workers make at the same time in one StartAttempts,
// their results in one FinishAttempts. A batcher sends the first write of a
// quiet moment at once, and the writes that arrive while a store call is
// under way together in the next one. Batching so costs no latency when the
// executor is idle, and under load it turns a round trip (SQL Server) or a
// commit (SQLite) per attempt into one per batch. Each write still gets its
// own answer, exactly what the store gave its item, and the worker reads it
// as before (written): a reservation is durable before its call and a
// result before the intent's next attempt, as without batching. Up to
// Config.WriteBatches batches of each kind are under way at once, so one
// slow write (a lock wait on one row, say) holds back only the writes
// batched with it, not every write after it; a store whose calls cost
// more than their rows states a smaller number, for larger batches.

// batcher gathers one kind of fenced write. Its senders are the term's
// goroutines: writers.start starts them, and they end once the term closes
// the queue, after every worker has stopped.
type batcher[P any] struct {
	// write is the store call for a batch; its context is the batcher's.
	write func(ctx context.Context, items []P) []error
	ctx   context.Context
	queue chan pendingWrite[P]
	// max bounds a batch: the most writes the term's workers can have
	// waiting at once, so one batch takes everything queued.
	max int
}

// pendingWrite is one worker's write, waiting for its batch.
type pendingWrite[P any] struct {
	item   P
	answer chan error
}

func newBatcher[P any](ctx context.Context, max int, write func(ctx context.Context, items []P) []error) *batcher[P] {
	return &batcher[P]{write: write, ctx: ctx, queue: make(chan pendingWrite[P], max), max: max}
}

// do hands item to the next batch and waits for its answer. The store call
// runs under the batcher's context, the term's work context (cancelled when
// the term stops); a result's write outlives it (newWriters).
func (b *batcher[P]) do(item P) error {
	answer := make(chan error, 1)
	b.queue <- pendingWrite[P]{item: item, answer: answer}
	return <-answer
}

// run is one sender: it takes the queued writes, a batch at a time, until
// the queue is closed and drained.
func (b *batcher[P]) run() {
	items := make([]P, 0, b.max)
	answers := make([]chan error, 0, b.max)
	for first := range b.queue {
		items, answers = append(items[:0], first.item), append(answers[:0], first.answer)
	gather:
		for len(items) < b.max {
			select {
			case next, ok := <-b.queue:
				if !ok {
					break gather
				}
				items, answers = append(items, next.item), append(answers, next.answer)
			default:
				break gather
			}
		}
		errs := b.write(b.ctx, items)
		for i, a := range answers {
			a <- errs[i]
		}
		clear(items) // drop the batch's references
	}
}

// writers are a term's two batchers.
type writers struct {
	starts   *batcher[ports.StartAttemptParams]
	finishes *batcher[ports.FinishAttemptParams]
	// senders is how many store calls of one kind the term makes at once.
	senders int
}

// newWriters builds the batchers of a term whose workers run under workCtx.
// Results are written under a context that outlives the term's cancellation
// by up to FinishTimeout, so a result the gateway gave is recorded even at
// shutdown, yet still only while the term's lease holds. While the term
// runs, a result write has no bound of its own: the fence ends it when the
// lease is lost, and a store slowed by load (a batch of results waits for
// the database server's CPU) is no reason to end a term whose lease holds.
func newWriters(workCtx context.Context, cfg Config) writers {
	max := maxWorkers(cfg)
	return writers{
		senders: cfg.WriteBatches,
		starts:  newBatcher(workCtx, max, cfg.Store.StartAttempts),
		finishes: newBatcher(workCtx, max, func(ctx context.Context, items []ports.FinishAttemptParams) []error {
			writeCtx, cancel := clockctx.Outliving(ctx, cfg.Clock, cfg.FinishTimeout)
			defer cancel()
			return cfg.Store.FinishAttempts(writeCtx, items)
		}),
	}
}

// start runs both batchers' senders; the returned function closes their
// queues and waits for every sender, once no worker can write any more.
func (w writers) start() (stop func()) {
	var wg sync.WaitGroup
	for range w.senders {
		wg.Go(w.starts.run)
		wg.Go(w.finishes.run)
	}
	return func() {
		close(w.starts.queue)
		close(w.finishes.queue)
		wg.Wait()
	}
}

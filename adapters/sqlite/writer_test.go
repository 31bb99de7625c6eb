package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// batchOf builds writes for a committer under test, without submitting them.
func batchOf(ctx context.Context, ops ...*writeOp) []*writeOp {
	for i, op := range ops {
		op.ctx = ctx
		op.name = fmt.Sprintf("op %d", i)
		op.done = make(chan struct{})
	}
	return ops
}

func insertIntent(id string) writeFunc {
	return func(ctx context.Context, q *writeTx) error {
		stamp, err := q.Stamp(ctx)
		if err != nil {
			return err
		}
		_, err = q.InsertIntent(ctx, sqlitedb.InsertIntentParams{
			IntentID: id, SubmissionTarget: "t", Payload: []byte(`{}`), Contract: `{}`,
			GatewayType: "sms", Mode: "batch", CreatedAt: 1, NextDueAt: nullNanos(testTime),
			LastModifiedAt: stamp,
		})
		return err
	}
}

// TestStampsIncreaseStrictlyInCommitOrder: within a batch every write gets
// a later stamp than the one before, although the clock stands still; a
// later batch continues after the newest stamp in the file even when the
// clock has stepped back; and a clock ahead of every stamp is used as is,
// to the millisecond.
func TestStampsIncreaseStrictlyInCommitOrder(t *testing.T) {
	db := openTestDB(t)
	w := idle(db)
	clock := time.Date(2026, 11, 22, 12, 0, 0, 123456789, time.UTC)
	w.now = func() time.Time { return clock }
	stampOf := func(id string) int64 {
		t.Helper()
		var v int64
		if err := db.writeDB.QueryRow("SELECT last_modified_at FROM submission_intents WHERE intent_id = ?", id).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	ms := clock.Truncate(time.Millisecond).UnixNano()

	w.commit(batchOf(context.Background(),
		&writeOp{kind: oneStatement, fn: insertIntent("a")},
		&writeOp{kind: oneStatement, fn: insertIntent("b")},
		&writeOp{kind: oneStatement, fn: insertIntent("c")},
	))
	if a, b, c := stampOf("a"), stampOf("b"), stampOf("c"); a != ms || b != ms+1 || c != ms+2 {
		t.Fatalf("stamps in one batch at a standing clock: %d %d %d, want %d %d %d", a, b, c, ms, ms+1, ms+2)
	}

	clock = clock.Add(-time.Hour) // stepped back
	w.commit(batchOf(context.Background(), &writeOp{kind: oneStatement, fn: insertIntent("d")}))
	if d := stampOf("d"); d != ms+3 {
		t.Fatalf("stamp after the clock stepped back: %d, want %d", d, ms+3)
	}

	clock = clock.Add(2 * time.Hour)
	w.commit(batchOf(context.Background(), &writeOp{kind: oneStatement, fn: insertIntent("e")}))
	if e, want := stampOf("e"), clock.Truncate(time.Millisecond).UnixNano(); e != want {
		t.Fatalf("stamp with the clock ahead: %d, want %d", e, want)
	}
}

// idle returns a committer on db's writer connection whose batches the test
// runs itself, by calling commit, so that it decides what shares a batch.
func idle(db *DB) *groupCommitter {
	return &groupCommitter{db: db.writeDB, log: discardLogger(), maxBatch: 16, now: time.Now}
}

func exists(t *testing.T, db *DB, id string) bool {
	t.Helper()
	_, err := db.Store().GetIntent(context.Background(), id)
	if err != nil && !errors.Is(err, core.ErrIntentNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// TestBatchIsolatesFailedWrites: in one transaction, with no savepoint, a
// write that refuses before its first change leaves nothing, a statement
// SQLite refuses is undone alone, a write whose caller gave up is skipped,
// and every other write commits, several-statement ones included.
func TestBatchIsolatesFailedWrites(t *testing.T) {
	db := openTestDB(t)
	w := idle(db)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	batch := batchOf(context.Background(),
		&writeOp{kind: oneStatement, fn: insertIntent("a")},
		&writeOp{kind: verdictFirst, fn: func(ctx context.Context, q *writeTx) error {
			return core.ErrFenced // refused before writing
		}},
		&writeOp{kind: oneStatement, fn: insertInvalidIntent("c")},
		&writeOp{kind: verdictFirst, fn: func(ctx context.Context, q *writeTx) error {
			if err := insertIntent("d")(ctx, q); err != nil {
				return err
			}
			return insertIntent("e")(ctx, q)
		}},
		&writeOp{kind: oneStatement, fn: insertIntent("f")},
	)
	batch[4].ctx = gone
	w.commit(batch)
	for i, op := range batch {
		select {
		case <-op.done:
		default:
			t.Fatalf("op %d not answered", i)
		}
	}
	if batch[0].err != nil || batch[3].err != nil {
		t.Fatalf("successful writes answered %v and %v", batch[0].err, batch[3].err)
	}
	if !errors.Is(batch[1].err, core.ErrFenced) {
		t.Fatalf("refused write answered %v, want core.ErrFenced", batch[1].err)
	}
	if !errors.Is(batch[2].err, core.ErrStoreUnavailable) {
		t.Fatalf("write SQLite refused answered %v, want core.ErrStoreUnavailable", batch[2].err)
	}
	if !errors.Is(batch[4].err, context.Canceled) {
		t.Fatalf("write of a canceled caller answered %v, want context.Canceled", batch[4].err)
	}
	for id, want := range map[string]bool{"a": true, "c": false, "d": true, "e": true, "f": false} {
		if got := exists(t, db, id); got != want {
			t.Errorf("intent %s exists=%v, want %v", id, got, want)
		}
	}
}

// insertInvalidIntent writes a row the schema's CHECK refuses.
func insertInvalidIntent(id string) writeFunc {
	return func(ctx context.Context, q *writeTx) error {
		_, err := q.InsertIntent(ctx, sqlitedb.InsertIntentParams{
			IntentID: id, Contract: "not json", NextDueAt: nullNanos(testTime), // CHECK (json_valid(contract))
		})
		return err
	}
}

// TestWriteFailingAfterItsFirstChangeFailsTheBatch: a several-statement
// write whose later statement fails has already changed the transaction,
// and nothing can undo just its part; so the whole batch fails and nothing
// of it commits, although SQLite undid the failed statement itself.
func TestWriteFailingAfterItsFirstChangeFailsTheBatch(t *testing.T) {
	db := openTestDB(t)
	w := idle(db)
	batch := batchOf(context.Background(),
		&writeOp{kind: oneStatement, fn: insertIntent("a")},
		&writeOp{kind: verdictFirst, fn: func(ctx context.Context, q *writeTx) error {
			if err := insertIntent("b")(ctx, q); err != nil {
				return err
			}
			return insertInvalidIntent("b2")(ctx, q)
		}},
		&writeOp{kind: oneStatement, fn: insertIntent("c")},
	)
	w.commit(batch)
	for i, op := range batch {
		if !errors.Is(op.err, core.ErrStoreUnavailable) {
			t.Errorf("op %d answered %v, want the batch's failure", i, op.err)
		}
	}
	for _, id := range []string{"a", "b", "b2", "c"} {
		if exists(t, db, id) {
			t.Errorf("intent %s committed although its batch failed", id)
		}
	}
}

// TestBatchFailsWhole: an error that may have ended the transaction (here a
// simulated I/O error) fails every write of the batch, and none commits,
// not even those that ran before it.
func TestBatchFailsWhole(t *testing.T) {
	db := openTestDB(t)
	w := idle(db)
	batch := batchOf(context.Background(),
		&writeOp{kind: oneStatement, fn: insertIntent("a")},
		&writeOp{kind: verdictFirst, fn: insertIntent("b")},
		&writeOp{kind: oneStatement, fn: func(ctx context.Context, q *writeTx) error {
			if err := insertIntent("c")(ctx, q); err != nil {
				return err
			}
			return errors.New("simulated disk I/O error")
		}},
		&writeOp{kind: oneStatement, fn: insertIntent("d")},
	)
	w.commit(batch)
	for i, op := range batch {
		if !errors.Is(op.err, core.ErrStoreUnavailable) {
			t.Errorf("op %d answered %v, want core.ErrStoreUnavailable", i, op.err)
		}
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		if exists(t, db, id) {
			t.Errorf("intent %s of a failed batch was committed", id)
		}
	}
}

// TestConcurrentMixedWrites drives the real committer with 64 callers whose
// writes share batches: creates, repeats, conflicts, fenced and unfenced
// attempts. Each caller gets its own answer and the state adds up.
func TestConcurrentMixedWrites(t *testing.T) {
	db := openTestDB(t)
	store := db.Store()
	ctx := context.Background()
	lease, ok, err := db.Leases().Acquire(ctx, ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: "me", Duration: time.Hour})
	if err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	good, stale := lease.Fence(), lease.Fence()
	stale.Epoch--
	const callers, rounds = 64, 10
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for r := range rounds {
				id := fmt.Sprintf("c%02d-r%02d", c, r)
				in := core.NewIntent(id, testContract(), []byte(`{"v":1}`), testTime)
				if res, err := store.CreateIntent(ctx, in); err != nil || !res.Created {
					t.Errorf("create %s: created=%v err=%v", id, res.Created, err)
					return
				}
				if res, err := store.CreateIntent(ctx, in); err != nil || res.Created {
					t.Errorf("repeat %s: created=%v err=%v", id, res.Created, err)
				}
				in.Payload = []byte(`{"v":2}`)
				if res, err := store.CreateIntent(ctx, in); err != nil || res.Created || string(res.Intent.Payload) != `{"v":1}` {
					t.Errorf("taken id %s: created=%v payload=%s err=%v, want the stored intent", id, res.Created, res.Intent.Payload, err)
				}
				err := store.StartAttempt(ctx, ports.StartAttemptParams{Fence: stale, IntentID: id, Number: 1, StartedAt: testTime})
				if !errors.Is(err, core.ErrFenced) {
					t.Errorf("stale start %s: %v", id, err)
				}
				if err := store.StartAttempt(ctx, ports.StartAttemptParams{Fence: good, IntentID: id, Number: 1, StartedAt: testTime}); err != nil {
					t.Errorf("start %s: %v", id, err)
				}
				if r%2 == 0 {
					o := core.Outcome{Status: core.OutcomeAccepted}
					if err := store.FinishAttempt(ctx, ports.FinishAttemptParams{
						Fence: good, IntentID: id, Number: 1, FinishedAt: testTime, Outcome: &o, Sent: true,
						Decision: core.Decision{Status: core.StatusAccepted, FinalOutcome: &o},
					}); err != nil {
						t.Errorf("finish %s: %v", id, err)
					}
				}
			}
		})
	}
	wg.Wait()
	var pending int
	for after := ""; ; {
		rows, err := store.ListPending(ctx, ports.ListPendingParams{AfterIntentID: after, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			break
		}
		pending += len(rows)
		after = rows[len(rows)-1].IntentID
	}
	if want := callers * rounds / 2; pending != want {
		t.Fatalf("%d pending intents, want %d", pending, want)
	}
	in, err := store.GetIntent(ctx, "c07-r03")
	if err != nil || in.AttemptCount != 1 || len(in.Attempts) != 1 || in.Attempts[0].Finished() {
		t.Fatalf("intent c07-r03: %+v err=%v; want one open attempt", in, err)
	}
}

// TestCloseWhileWriting: Close waits for the batch in progress, answers the
// queued writes, refuses later ones, and leaves no goroutine behind.
func TestCloseWhileWriting(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	db, err := Open(context.Background(), Config{Path: t.TempDir() + "/c.db", Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(context.Background(), MigrateUp); err != nil {
		t.Fatal(err)
	}
	store := db.Store()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var done, refused int
	// writing is closed once 200 writes were stored: Close then comes in
	// the middle of a steady stream of writes.
	writing := make(chan struct{})
	for c := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				in := core.NewIntent(fmt.Sprintf("c%d-%d", c, i), testContract(), []byte(`{}`), testTime)
				_, err := store.CreateIntent(context.Background(), in)
				mu.Lock()
				if err == nil {
					done++
					if done == 200 {
						close(writing)
					}
				} else {
					refused++
				}
				mu.Unlock()
				if err != nil {
					if !errors.Is(err, core.ErrStoreUnavailable) {
						t.Errorf("write during close: %v", err)
					}
					return
				}
			}
		})
	}
	select {
	case <-writing:
	case <-time.After(10 * time.Second):
		_ = db.Close()
		wg.Wait()
		t.Fatalf("%d writes stored within 10s, want 200 before Close", done)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wg.Wait()
	if refused != 16 {
		t.Fatalf("%d writers were refused after Close, want all 16", refused)
	}
}

func TestCanceledContext(t *testing.T) {
	db := openTestDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := db.Store().CreateIntent(ctx, core.NewIntent("x", testContract(), []byte(`{}`), testTime))
	if !errors.Is(err, context.Canceled) || !errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("err = %v, want context.Canceled as core.ErrStoreUnavailable", err)
	}
	if exists(t, db, "x") {
		t.Fatal("the write of a canceled caller was committed")
	}
}

// TestAbandonedWriteNeverRuns: a caller whose context ends while its write
// is still queued gets its context's error at once, and the writer then
// skips the write, so the write's function never touches the caller's
// variables after the caller returned (the race detector's complaint about
// Renew and Acquire before this rule).
func TestAbandonedWriteNeverRuns(t *testing.T) {
	db := openTestDB(t)
	w := idle(db)
	w.ops = make(chan *writeOp, 1) // queued, but no goroutine takes it yet
	ctx, cancel := context.WithCancel(context.Background())
	ran := false
	errc := make(chan error, 1)
	go func() {
		errc <- w.do(ctx, "abandoned", oneStatement, func(ctx context.Context, q *writeTx) error {
			ran = true
			return insertIntent("x")(ctx, q)
		})
	}()
	op := <-w.ops // the write as the writer would take it
	w.ops <- op
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned write answered %v, want context.Canceled", err)
	}
	w.commit([]*writeOp{<-w.ops})
	if ran || exists(t, db, "x") {
		t.Fatalf("the abandoned write ran (ran=%v)", ran)
	}
}

// TestCallerOfARunningWriteWaitsForItsAnswer: once the writer has claimed a
// write, its caller's context ending no longer abandons it; the caller
// waits and gets the true answer (here: committed).
func TestCallerOfARunningWriteWaitsForItsAnswer(t *testing.T) {
	db := openTestDB(t)
	w := idle(db)
	w.ops = make(chan *writeOp, 1)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- w.do(ctx, "running", oneStatement, func(c context.Context, q *writeTx) error {
			close(started)
			<-ctx.Done() // the caller gives up while the write runs
			return insertIntent("y")(c, q)
		})
	}()
	op := <-w.ops
	go w.commit([]*writeOp{op})
	<-started
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("caller of a running write answered %v, want its true result (nil)", err)
	}
	if !exists(t, db, "y") {
		t.Fatal("the write the caller was told committed is not there")
	}
}

// TestStoreUnavailableFromASingleWriteFailsTheBatch: a single-statement
// write that reports a database failure (already wrapped as
// core.ErrStoreUnavailable) is not a verdict about its request; SQLite may
// have rolled the transaction back, so no write of the batch may commit.
func TestStoreUnavailableFromASingleWriteFailsTheBatch(t *testing.T) {
	db := openTestDB(t)
	w := idle(db)
	batch := batchOf(context.Background(),
		&writeOp{kind: oneStatement, fn: insertIntent("a")},
		&writeOp{kind: oneStatement, fn: func(context.Context, *writeTx) error {
			return mapError("simulated", errors.New("disk I/O error"))
		}},
		&writeOp{kind: oneStatement, fn: insertIntent("c")},
	)
	w.commit(batch)
	for i, op := range batch {
		if !errors.Is(op.err, core.ErrStoreUnavailable) {
			t.Errorf("op %d answered %v, want the batch's failure", i, op.err)
		}
	}
	for _, id := range []string{"a", "c"} {
		if exists(t, db, id) {
			t.Errorf("intent %s committed although its batch failed", id)
		}
	}
}

// TestFactsStateNoLookback pins that the single writer, which commits in
// the order of the markers it stamps, needs no refresh look-back.
func TestFactsStateNoLookback(t *testing.T) {
	if lb := (&store{}).Facts().ChangeLookback; lb != 0 {
		t.Fatalf("SQLite store states ChangeLookback %v, want 0", lb)
	}
}

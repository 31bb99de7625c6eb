package sqlserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// TestCreateIntentWhileAnotherSessionInsertsIt plays the race CreateIntent
// must win in one request: another session has inserted the same intentId
// and not committed yet when CreateIntent's call arrives. Under SQL
// Server's locking READ COMMITTED the NOT EXISTS waits for that row and
// finds it; under row versioning (READ_COMMITTED_SNAPSHOT, Babelfish's
// PostgreSQL) NOT EXISTS does not see it, the insert waits on the key and
// fails with 2627 once the other session commits, and the procedure's CATCH
// takes that as the other session's win. Either way CreateIntent answers
// the winner's row with Created=false and no error, from its one call of
// the procedure: the read after the CATCH is a statement of its own, which
// sees the row committed meanwhile. The test commits only
// once the server shows CreateIntent's session blocked by the inserting
// one (sys.sysprocesses, on both servers; SQL Server needs VIEW SERVER
// STATE to show other sessions).
func TestCreateIntentWhileAnotherSessionInsertsIt(t *testing.T) {
	db, rc := countedDB(t, Config{})
	s := db.Store()
	ctx := context.Background()
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	winner := core.NewIntent("raced", testContract, json.RawMessage(`{"to":"+100"}`), created)
	params, err := insertIntentParams(winner)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.queries.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var spid int
	if err := tx.QueryRowContext(ctx, "SELECT @@SPID").Scan(&spid); err != nil {
		t.Fatal(err)
	}
	if err := db.q.WithTx(tx).InsertIntent(ctx, params); err != nil {
		t.Fatal(err)
	}

	type answer struct {
		res ports.CreateIntentResult
		err error
	}
	before := rc.snapshot(poolQueries)
	done := make(chan answer, 1)
	loser := core.NewIntent("raced", testContract, json.RawMessage(`{"to":"+200"}`), created.Add(time.Second))
	go func() {
		res, err := s.CreateIntent(ctx, loser)
		done <- answer{res, err}
	}()
	waitUntilBlocked(t, db, spid, func() {
		select {
		case a := <-done:
			t.Fatalf("CreateIntent answered (created=%v, err=%v) while the other session's insert was uncommitted", a.res.Created, a.err)
		default:
		}
	})
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil {
		t.Fatalf("CreateIntent after losing the race: %v", a.err)
	}
	if a.res.Created || string(a.res.Intent.Payload) != `{"to":"+100"}` || !a.res.Intent.CreatedAt.Equal(created) {
		t.Fatalf("CreateIntent after losing the race: created=%v payload %s created at %s; want the winner's row, not created",
			a.res.Created, a.res.Intent.Payload, a.res.Intent.CreatedAt)
	}
	calls := 0
	for _, q := range rc.since(poolQueries, before).Queries {
		if q == createIntentSQL {
			calls++
		}
	}
	if calls != 1 {
		t.Fatalf("CreateIntent called its procedure %d times, want once: the read after the lost insert did not see the winner's row", calls)
	}
}

// TestCreateIntentsWhileAnotherSessionInsertsOne plays the race of a
// batch, sent as the procedure's call and as the text statement: another
// session has inserted one of its intentIds and not committed yet. On
// Babelfish (and under row versioning) the batch's insert waits on that
// key and fails with 2627 once the other session commits; the procedure
// ends there, the text statement reads its rows back first and reports the
// error after them, and either way CreateIntents sends the batch again,
// which finds the winner's row and inserts the rest. The answer is the
// winner's row, not created, beside the batch's new intent.
func TestCreateIntentsWhileAnotherSessionInsertsOne(t *testing.T) {
	db, rc := countedDB(t, Config{})
	for _, c := range []struct {
		name, payload, query string
	}{
		{"procedure", `{"to":"+300"}`, insertIntentsProcSQL},
		{"text statement", `{"to":"é"}`, insertIntentsSQL(2)},
	} {
		t.Run(c.name, func(t *testing.T) {
			raceCreateIntents(t, db, rc, c.name, json.RawMessage(c.payload), c.query)
		})
	}
}

// raceCreateIntents runs the race of TestCreateIntentsWhileAnotherSessionInsertsOne
// with the intentIds prefix+"raced" and prefix+"beside", the latter's
// payload deciding the request, and checks that CreateIntents sent query.
func raceCreateIntents(t *testing.T, db *DB, rc *requestCounter, prefix string, payload json.RawMessage, query string) {
	s := db.Store()
	ctx := context.Background()
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	winner := core.NewIntent(prefix+"raced", testContract, json.RawMessage(`{"to":"+100"}`), created)
	params, err := insertIntentParams(winner)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.queries.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var spid int
	if err := tx.QueryRowContext(ctx, "SELECT @@SPID").Scan(&spid); err != nil {
		t.Fatal(err)
	}
	if err := db.q.WithTx(tx).InsertIntent(ctx, params); err != nil {
		t.Fatal(err)
	}

	type answer struct {
		res []ports.CreateIntentResult
		err error
	}
	before := rc.snapshot(poolQueries)
	done := make(chan answer, 1)
	batch := []core.Intent{
		core.NewIntent(prefix+"raced", testContract, json.RawMessage(`{"to":"+200"}`), created.Add(time.Second)),
		core.NewIntent(prefix+"beside", testContract, payload, created.Add(time.Second)),
	}
	go func() {
		res, err := s.CreateIntents(ctx, batch)
		done <- answer{res, err}
	}()
	waitUntilBlocked(t, db, spid, func() {
		select {
		case a := <-done:
			t.Fatalf("CreateIntents answered (%+v, err=%v) while the other session's insert was uncommitted", a.res, a.err)
		default:
		}
	})
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil {
		t.Fatalf("CreateIntents after losing the race: %v", a.err)
	}
	if r := a.res[0]; r.Created || string(r.Intent.Payload) != `{"to":"+100"}` || !r.Intent.CreatedAt.Equal(created) {
		t.Errorf("the raced item: created=%v payload %s created at %s; want the winner's row, not created",
			r.Created, r.Intent.Payload, r.Intent.CreatedAt)
	}
	if r := a.res[1]; !r.Created || string(r.Intent.Payload) != string(payload) {
		t.Errorf("the item beside it: created=%v payload %s; want it created with %s", r.Created, r.Intent.Payload, payload)
	}
	calls := 0
	for _, q := range rc.since(poolQueries, before).Queries {
		if q == query {
			calls++
		}
	}
	if calls < 1 || calls > insertRounds {
		t.Errorf("CreateIntents sent its request %d times, want 1 to %d", calls, insertRounds)
	}
	t.Logf("CreateIntents sent its request %d times", calls)
}

// waitUntilBlocked returns once the server shows a session blocked by
// session spid (sys.sysprocesses, on both servers; SQL Server needs VIEW
// SERVER STATE to show other sessions). check runs between reads, to fail
// the test when the request that should wait has answered.
func waitUntilBlocked(t *testing.T, db *DB, spid int, check func()) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var blocked int
		err := db.queries.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM sys.sysprocesses WHERE CAST(blocked AS int) = $1", spid).Scan(&blocked)
		if err != nil {
			t.Fatalf("reading sys.sysprocesses: %v", err)
		}
		if blocked > 0 {
			return
		}
		check()
		if time.Now().After(deadline) {
			t.Fatalf("no session shown blocked by session %d within 30s (on SQL Server the login needs VIEW SERVER STATE)", spid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

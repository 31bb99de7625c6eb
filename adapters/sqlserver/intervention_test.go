package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var testOperator = ports.IntentActionParams{Actor: core.Actor{Surface: ports.SurfaceAPI, Role: core.RoleOperator}}

// TestCancelWaitsOutAReservationInProgress plays the race the store suite
// can only hope to hit: a reservation of the intent has counted its attempt
// and inserted the attempt row, uncommitted, when the cancel arrives. The
// cancel must wait for it (the test commits only once the server shows the
// cancel's session blocked by the reservation's) and then refuse as in
// flight, whatever snapshot its statements started from: a cancel that
// judged the attempts as they were before the reservation would end an
// intent whose gateway call is about to be made. Run under locking READ
// COMMITTED and, on SQL Server, READ_COMMITTED_SNAPSHOT.
func TestCancelWaitsOutAReservationInProgress(t *testing.T) {
	serverDSN(t)
	variants := []databaseOptions{{}}
	if !serverIsBabelfish(t, adminDB(t)) {
		variants = append(variants, databaseOptions{readCommittedSnapshot: true})
	}
	for _, opts := range variants {
		db, _ := migratedDB(t, opts)
		s := db.Store()
		ctx := context.Background()
		if _, err := s.CreateIntent(ctx, newTestIntent("raced")); err != nil {
			t.Fatal(err)
		}
		reservation, err := db.queries.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = reservation.Rollback() }()
		// What startAttempts writes for one item, in its order.
		if _, err := reservation.ExecContext(ctx, `UPDATE submission_intents
SET attempt_count = attempt_count + 1, last_modified_at = SYSUTCDATETIME()
WHERE intent_id = $1 AND status = 'pending' AND attempt_count = 0`, "raced"); err != nil {
			t.Fatal(err)
		}
		if _, err := reservation.ExecContext(ctx, `INSERT INTO submission_attempts
(intent_id, attempt_number, holder_id, lease_epoch, started_at, sent)
VALUES ($1, 1, 'sm-test', 1, SYSUTCDATETIME(), 1)`, "raced"); err != nil {
			t.Fatal(err)
		}
		type answer struct {
			applied bool
			err     error
		}
		cancelled := make(chan answer, 1)
		go func() {
			p := testOperator
			p.IntentID = "raced"
			applied, err := s.CancelIntent(ctx, p)
			cancelled <- answer{applied, err}
		}()
		waitBlockedBy(t, reservation, func() bool { return len(cancelled) > 0 })
		if err := reservation.Commit(); err != nil {
			t.Fatal(err)
		}
		got := <-cancelled
		if got.applied || !errors.Is(got.err, core.ErrAttemptInFlight) {
			t.Fatalf("%+v: the cancel that waited for a reservation answered applied=%v, %v; want core.ErrAttemptInFlight",
				opts, got.applied, got.err)
		}
		in, err := s.GetIntent(ctx, "raced")
		if err != nil {
			t.Fatal(err)
		}
		if last, ok := in.LastAttempt(); in.Status != core.StatusPending || !ok || last.Finished() {
			t.Fatalf("%+v: after the race the intent is %s with attempts %+v; want pending with its attempt open", opts, in.Status, in.Attempts)
		}
	}
}

// waitBlockedBy returns once some session waits for a lock tx holds, as
// the server reports it (sys.sysprocesses, which SQL Server and Babelfish
// both keep), polling; it fails the test when answered reports that the
// waiting call returned first, or after a generous bound.
func waitBlockedBy(t *testing.T, tx *sql.Tx, answered func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int64
		err := tx.QueryRowContext(context.Background(),
			"SELECT CAST(COUNT(*) AS bigint) FROM sys.sysprocesses WHERE blocked = @@SPID").Scan(&n)
		switch {
		case err != nil:
			t.Fatalf("reading who is blocked: %v", err)
		case n > 0:
			return
		case answered():
			t.Fatal("the cancel answered while the reservation was uncommitted: it did not wait for the intent row")
		case time.Now().After(deadline):
			t.Fatal("the cancel never waited for the reservation's lock")
		}
		<-tick.C
	}
}

// TestInterventionsTouchOnlyTheIntentAsked: SQL Server finds "a" equal to
// "a ", but a cancel or run now of "a " must not act on "a".
func TestInterventionsTouchOnlyTheIntentAsked(t *testing.T) {
	db, _ := migratedDB(t, databaseOptions{})
	s := db.Store()
	ctx := context.Background()
	in := newTestIntent("a")
	in.NextDueAt = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := s.CreateIntent(ctx, in); err != nil {
		t.Fatal(err)
	}
	before, err := s.GetIntent(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	p := testOperator
	p.IntentID = "a "
	if _, err := s.CancelIntent(ctx, p); !errors.Is(err, core.ErrIntentNotFound) {
		t.Errorf("CancelIntent(%q) = %v, want core.ErrIntentNotFound", p.IntentID, err)
	}
	if _, err := s.RunIntentNow(ctx, p); !errors.Is(err, core.ErrIntentNotFound) {
		t.Errorf("RunIntentNow(%q) = %v, want core.ErrIntentNotFound", p.IntentID, err)
	}
	after, err := s.GetIntent(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if after.Status != before.Status || !after.NextDueAt.Equal(before.NextDueAt) || !after.LastModifiedAt.Equal(before.LastModifiedAt) {
		t.Errorf("acting on %q changed %q: %+v, was %+v", "a ", "a", after, before)
	}
	p.IntentID = "a"
	if applied, err := s.RunIntentNow(ctx, p); err != nil || !applied {
		t.Fatalf("RunIntentNow(a) = %v, %v", applied, err)
	}
	if events, err := s.IntentEvents(ctx, "a "); err != nil || len(events) != 0 {
		t.Errorf("IntentEvents(%q) = %+v, %v; want none (they are a's)", "a ", events, err)
	}
}

// TestInterventionSQLIsTSQL parses the actions' batches as the driver
// sends them: the settings and variables, the transaction with the read,
// the update and the conditional event, the verdict, and the settings set
// back (interventionBatch says why).
func TestInterventionSQLIsTSQL(t *testing.T) {
	want := []string{"PredicateSetStatement", "PredicateSetStatement", "DeclareVariableStatement",
		"BeginTransactionStatement", "SelectStatement", "SetVariableStatement", "UpdateStatement",
		"SetVariableStatement", "IfStatement", "CommitTransactionStatement", "SelectStatement",
		"PredicateSetStatement", "PredicateSetStatement"}
	for name, batch := range map[string]string{"cancelIntentSQL": cancelIntentSQL, "runIntentNowSQL": runIntentNowSQL} {
		text, err := toDriverText(batch)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := statementTypes(parseTSQL(t, name, text)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s parsed as %v, want %v", name, got, want)
		}
		for _, f := range forbidden {
			if loc := f.re.FindStringIndex(batch); loc != nil {
				t.Errorf("%s uses %q: %s", name, batch[loc[0]:loc[1]], f.why)
			}
		}
	}
}

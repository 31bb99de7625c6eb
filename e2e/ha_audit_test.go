package e2e

import (
	"context"
	"database/sql"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/core"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" database/sql driver the audit reads with
)

// epochOrderTolerance absorbs SQLite's millisecond-rounded clock: the lease
// statements compare times rounded to the millisecond, so a successor's
// acquire can be stamped up to a millisecond before the real instant.
const epochOrderTolerance = 2 * time.Millisecond

// auditDB reads the database behind the instances' backs, read-only, to
// check the HA invariants from what was recorded: the attempt rows with the
// holder and epoch that wrote them, and the intents.
type auditDB struct {
	path string
	db   *sql.DB
	// rw is opened on first use by the tests that play an outside lease
	// holder; everything else only reads.
	rw *sql.DB
}

func openAuditDB(t *testing.T, path string) *auditDB {
	t.Helper()
	q := url.Values{}
	q.Set("_busy_timeout", "5000")
	q.Set("_query_only", "1")
	db, err := sql.Open("sqlite3", path+"?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return &auditDB{path: path, db: db}
}

// writer returns a writable handle on the database, for the outside holder.
func (a *auditDB) writer(t *testing.T) *sql.DB {
	t.Helper()
	if a.rw == nil {
		q := url.Values{}
		q.Set("_busy_timeout", "5000")
		q.Set("_txlock", "immediate")
		db, err := sql.Open("sqlite3", a.path+"?"+q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { _ = db.Close() })
		a.rw = db
	}
	return a.rw
}

// auditAttempt is one row of submission_attempts.
type auditAttempt struct {
	IntentID      string
	Number        int
	HolderID      string
	Epoch         int64
	StartedAt     time.Time
	FinishedAt    time.Time // zero while unfinished
	OutcomeStatus string
	Error         string
}

// auditIntent is the part of a submission_intents row the invariants need.
type auditIntent struct {
	IntentID     string
	Status       core.IntentStatus
	AttemptCount int
	CreatedAt    time.Time
}

func (a *auditDB) attempts(t *testing.T) []auditAttempt {
	t.Helper()
	rows, err := a.db.QueryContext(context.Background(), `
		SELECT intent_id, attempt_number, holder_id, lease_epoch, started_at, finished_at,
		       COALESCE(outcome_status, ''), COALESCE(error, '')
		FROM submission_attempts ORDER BY started_at, intent_id, attempt_number`)
	if err != nil {
		t.Fatalf("reading attempts: %v", err)
	}
	defer rows.Close()
	var out []auditAttempt
	for rows.Next() {
		var (
			r        auditAttempt
			started  int64
			finished sql.NullInt64
		)
		if err := rows.Scan(&r.IntentID, &r.Number, &r.HolderID, &r.Epoch, &started, &finished, &r.OutcomeStatus, &r.Error); err != nil {
			t.Fatalf("reading attempts: %v", err)
		}
		r.StartedAt = time.Unix(0, started)
		if finished.Valid {
			r.FinishedAt = time.Unix(0, finished.Int64)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading attempts: %v", err)
	}
	return out
}

func (a *auditDB) intents(t *testing.T) map[string]auditIntent {
	t.Helper()
	rows, err := a.db.QueryContext(context.Background(),
		`SELECT intent_id, status, attempt_count, created_at FROM submission_intents`)
	if err != nil {
		t.Fatalf("reading intents: %v", err)
	}
	defer rows.Close()
	out := map[string]auditIntent{}
	for rows.Next() {
		var (
			r       auditIntent
			created int64
		)
		if err := rows.Scan(&r.IntentID, &r.Status, &r.AttemptCount, &created); err != nil {
			t.Fatalf("reading intents: %v", err)
		}
		r.CreatedAt = time.Unix(0, created)
		out[r.IntentID] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading intents: %v", err)
	}
	return out
}

// waitTerminal waits until every one of ids is stored and terminal, and
// returns the intents.
func (a *auditDB) waitTerminal(t *testing.T, ids []string) map[string]auditIntent {
	t.Helper()
	var all map[string]auditIntent
	deadline := time.Now().Add(haWait)
	for {
		all = a.intents(t)
		var waiting []string
		for _, id := range ids {
			if in, ok := all[id]; !ok || !in.Status.Terminal() {
				waiting = append(waiting, id)
			}
		}
		if len(waiting) == 0 {
			return all
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d intents not terminal within %s, e.g. %v", len(waiting), len(ids), haWait, waiting[:min(len(waiting), 5)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkInvariants asserts what fencing must guarantee whatever happened to
// the instances, from the rows and the simulator's counts alone:
//   - each epoch was held by one holder;
//   - epochs execute in order: no attempt of an epoch starts after an
//     attempt of a later epoch started (a stale leader never acts again);
//   - attempts are numbered 1..attempt_count without gaps (append-only);
//   - the gateway never saw more submissions of a reference than attempts
//     were recorded as started for that intent;
//   - no reference was accepted twice, and an accepted intent has exactly
//     one accepted attempt, which the gateway accepted.
func (a *auditDB) checkInvariants(t *testing.T, stats gatewaysim.Stats) {
	t.Helper()
	checkHAInvariants(t, a.attempts(t), a.intents(t), stats)
}

// checkHAInvariants is checkInvariants over rows read from any store.
func checkHAInvariants(t *testing.T, attempts []auditAttempt, intents map[string]auditIntent, stats gatewaysim.Stats) {
	t.Helper()

	holderOf := map[int64]string{}
	latestStart := map[int64]time.Time{}
	perIntent := map[string][]auditAttempt{}
	for _, at := range attempts {
		if h, ok := holderOf[at.Epoch]; ok && h != at.HolderID {
			t.Errorf("epoch %d has attempts by %s and by %s", at.Epoch, h, at.HolderID)
		}
		holderOf[at.Epoch] = at.HolderID
		if at.StartedAt.After(latestStart[at.Epoch]) {
			latestStart[at.Epoch] = at.StartedAt
		}
		perIntent[at.IntentID] = append(perIntent[at.IntentID], at)
	}
	for _, at := range attempts {
		for epoch, latest := range latestStart {
			if epoch < at.Epoch && latest.After(at.StartedAt.Add(epochOrderTolerance)) {
				t.Errorf("epoch %d (%s) started an attempt at %s, after epoch %d (%s) started attempt %d of %q at %s",
					epoch, holderOf[epoch], latest.Format(time.RFC3339Nano), at.Epoch, at.HolderID, at.Number, at.IntentID,
					at.StartedAt.Format(time.RFC3339Nano))
			}
		}
	}
	for id, in := range intents {
		rows := perIntent[id]
		slices.SortFunc(rows, func(x, y auditAttempt) int { return x.Number - y.Number })
		if len(rows) != in.AttemptCount {
			t.Errorf("intent %q: attempt_count %d but %d attempt rows", id, in.AttemptCount, len(rows))
		}
		accepted := 0
		for i, r := range rows {
			if r.Number != i+1 {
				t.Errorf("intent %q: attempt numbers %v have a gap", id, haAttemptNumbers(rows))
				break
			}
			if r.OutcomeStatus == "accepted" {
				accepted++
			}
		}
		st := stats.References[id]
		if st.Submissions > len(rows) {
			t.Errorf("intent %q: the gateway received %d submissions but only %d attempts were recorded as started", id, st.Submissions, len(rows))
		}
		if accepted > 1 {
			t.Errorf("intent %q: %d accepted attempts", id, accepted)
		}
		if in.Status == core.StatusAccepted && (accepted != 1 || st.Accepted != 1) {
			t.Errorf("intent %q is accepted with %d accepted attempts and %d gateway acceptances, want 1 and 1", id, accepted, st.Accepted)
		}
	}
	for ref, st := range stats.References {
		if st.Accepted > 1 {
			t.Errorf("the gateway accepted reference %q %d times", ref, st.Accepted)
		}
		if _, ok := intents[ref]; !ok {
			t.Errorf("the gateway received reference %q, which is no stored intent", ref)
		}
	}
}

func haAttemptNumbers(rows []auditAttempt) []int {
	out := make([]int, len(rows))
	for i, r := range rows {
		out[i] = r.Number
	}
	return out
}

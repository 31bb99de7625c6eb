package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

func pragma(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var v string
	if err := db.QueryRowContext(context.Background(), "PRAGMA "+name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

func TestConnectionSettings(t *testing.T) {
	for _, c := range []struct {
		sync Synchronous
		want string // PRAGMA synchronous reads back as a number
	}{{"", "2"}, {SynchronousFull, "2"}, {SynchronousNormal, "1"}} {
		t.Run(fmt.Sprintf("synchronous=%q", c.sync), func(t *testing.T) {
			db, err := Open(context.Background(), Config{
				Path: filepath.Join(t.TempDir(), "s.db"), Synchronous: c.sync,
				BusyTimeout: 1234 * time.Millisecond, Logger: discardLogger(),
			})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, p := range []struct {
				db         *sql.DB
				name, want string
			}{
				{db.writeDB, "journal_mode", "wal"},
				{db.writeDB, "synchronous", c.want},
				{db.writeDB, "foreign_keys", "1"},
				{db.writeDB, "busy_timeout", "1234"},
				{db.readDB, "foreign_keys", "1"},
				{db.readDB, "busy_timeout", "1234"},
				{db.readDB, "query_only", "1"},
			} {
				if got := pragma(t, p.db, p.name); got != p.want {
					t.Errorf("PRAGMA %s = %s, want %s", p.name, got, p.want)
				}
			}
		})
	}
}

func TestConfigRefused(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Path: "/tmp/x.db?mode=ro"},
		{Path: filepath.Join(t.TempDir(), "x.db"), Synchronous: "OFF"},
	} {
		if db, err := Open(context.Background(), cfg); err == nil {
			db.Close()
			t.Errorf("Open(%+v) succeeded", cfg)
		}
	}
}

func TestForeignKeysEnforced(t *testing.T) {
	db := openTestDB(t)
	_, err := db.writeDB.ExecContext(context.Background(),
		`INSERT INTO submission_attempts (intent_id, attempt_number, holder_id, lease_epoch, started_at) VALUES ('missing', 1, 'h', 1, 1)`)
	if err == nil {
		t.Fatal("an attempt of a missing intent was inserted: foreign keys are off")
	}
}

// TestTimesRoundTripNanoseconds: the store keeps a core time to the
// nanosecond, whatever its zone, and gives it back in UTC.
func TestTimesRoundTripNanoseconds(t *testing.T) {
	db := openTestDB(t)
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	created := testTime.In(zone)
	in := core.NewIntent("intent-1", testContract(), []byte(`{}`), created)
	res, err := db.Store().CreateIntent(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Store().GetIntent(context.Background(), "intent-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range []time.Time{res.Intent.CreatedAt, got.CreatedAt, got.NextDueAt} {
		if tm != testTime { // == also compares the location and the monotonic reading
			t.Errorf("time %v (%s), want exactly %v in UTC", tm, tm.Location(), testTime)
		}
	}
	if got.LastModifiedAt.Location() != time.UTC || got.LastModifiedAt.IsZero() {
		t.Errorf("last_modified_at %v, want a UTC change stamp", got.LastModifiedAt)
	}
}

// TestLastModifiedStrictlyIncreasing: concurrent writes, many within one
// millisecond of the writer's clock, still get distinct change times in commit
// order, so the refresh cursor cannot skip one committed later.
func TestLastModifiedStrictlyIncreasing(t *testing.T) {
	db := openTestDB(t)
	store := db.Store()
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				in := core.NewIntent(fmt.Sprintf("w%d-%02d", w, i), testContract(), []byte(`{}`), testTime)
				if _, err := store.CreateIntent(context.Background(), in); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	rows, err := store.ListChanged(context.Background(), ports.ListChangedParams{Limit: writers * each})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != writers*each {
		t.Fatalf("%d changes, want %d", len(rows), writers*each)
	}
	for i := 1; i < len(rows); i++ {
		if !rows[i].LastModifiedAt.After(rows[i-1].LastModifiedAt) {
			t.Fatalf("changes %d and %d share or reverse last_modified_at %v, %v",
				i-1, i, rows[i-1].LastModifiedAt, rows[i].LastModifiedAt)
		}
	}
}

func TestClosedStoreUnavailable(t *testing.T) {
	db := openTestDB(t)
	store, leases := db.Store(), db.Leases()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err := store.GetIntent(ctx, "x")
	wantUnavailable(t, "GetIntent", err)
	_, err = store.CreateIntent(ctx, core.NewIntent("x", testContract(), []byte(`{}`), testTime))
	wantUnavailable(t, "CreateIntent", err)
	_, err = store.ListChanged(ctx, ports.ListChangedParams{Limit: 1})
	wantUnavailable(t, "ListChanged", err)
	_, _, err = leases.Acquire(ctx, ports.AcquireLeaseParams{LeaseName: "l", HolderID: "h", Duration: time.Second})
	wantUnavailable(t, "Acquire", err)
	_, _, err = leases.Read(ctx, "l")
	wantUnavailable(t, "Read", err)
}

func wantUnavailable(t *testing.T, op string, err error) {
	t.Helper()
	if !errors.Is(err, core.ErrStoreUnavailable) {
		t.Errorf("%s on a closed store: err = %v, want core.ErrStoreUnavailable", op, err)
	}
}

// TestInvalidWritesRefusedBeforeTheDatabase: malformed requests are the
// caller's bug, reported as such, never as the store being unavailable.
func TestInvalidWritesRefusedBeforeTheDatabase(t *testing.T) {
	db := openTestDB(t)
	store := db.Store()
	ctx := context.Background()
	noDue := core.NewIntent("x", testContract(), []byte(`{}`), testTime)
	noDue.NextDueAt = time.Time{}
	fence := core.Fence{LeaseName: "l", HolderID: "h", Epoch: 1}
	for name, err := range map[string]error{
		"create without next due": func() error { _, err := store.CreateIntent(ctx, noDue); return err }(),
		"finish without finish time": store.FinishAttempt(ctx, ports.FinishAttemptParams{
			Fence: fence, IntentID: "x", Number: 1, Decision: core.Decision{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedOneShotCompleted},
		}),
		"finish accepted without outcome": store.FinishAttempt(ctx, ports.FinishAttemptParams{
			Fence: fence, IntentID: "x", Number: 1, FinishedAt: testTime, Decision: core.Decision{Status: core.StatusAccepted},
		}),
		"finish pending without next due": store.FinishAttempt(ctx, ports.FinishAttemptParams{
			Fence: fence, IntentID: "x", Number: 1, FinishedAt: testTime, Decision: core.Decision{Status: core.StatusPending},
		}),
		"list with limit 0": func() error { _, err := store.ListPending(ctx, ports.ListPendingParams{}); return err }(),
	} {
		if err == nil || errors.Is(err, core.ErrStoreUnavailable) {
			t.Errorf("%s: err = %v, want a plain error", name, err)
		}
	}
}

func testContract() core.Contract {
	return core.Contract{
		SubmissionTarget: "alerts", GatewayType: core.GatewaySMS, GatewayURL: "http://127.0.0.1:9",
		Mode: core.ModeRealtime, Policy: core.PolicyOneShot, TerminalOutcomes: []string{},
	}
}

package sqlite

import (
	"context"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/db/migrations"
)

func TestMigrateUpDownUp(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "m.db"), Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	assertApplied(t, db, false)
	if got := tables(t, db); len(got) != 0 {
		t.Fatalf("tables before migrating: %v", got)
	}
	if err := db.Migrate(ctx, MigrateUp); err != nil {
		t.Fatalf("up: %v", err)
	}
	assertApplied(t, db, true)
	want := []string{"submission_attempts", "submission_console_secrets", "submission_console_sessions",
		"submission_gateway_pauses", "submission_intent_events", "submission_intents", "submission_manager_leases", "submission_resubmissions"}
	if got := tables(t, db); !slices.Equal(got, want) {
		t.Fatalf("tables after up: %v, want %v", got, want)
	}
	// Up again is a no-op, not an error.
	if err := db.Migrate(ctx, MigrateUp); err != nil {
		t.Fatalf("second up: %v", err)
	}
	// Down rolls back the latest migration: once per migration empties the
	// database.
	states, err := db.MigrationStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range states {
		if err := db.Migrate(ctx, MigrateDown); err != nil {
			t.Fatalf("down: %v", err)
		}
	}
	assertApplied(t, db, false)
	if got := tables(t, db); len(got) != 0 {
		t.Fatalf("tables after down: %v, want none", got)
	}
	if err := db.Migrate(ctx, MigrateDown); err == nil {
		t.Fatal("down with nothing applied succeeded")
	}
	if err := db.Migrate(ctx, MigrateUp); err != nil {
		t.Fatalf("up after down: %v", err)
	}
	if got := tables(t, db); !slices.Equal(got, want) {
		t.Fatalf("tables after up, down, up: %v, want %v", got, want)
	}
	// The schema works after the round trip.
	in := core.NewIntent("intent-1", core.Contract{
		SubmissionTarget: "t", GatewayType: core.GatewaySMS, Mode: core.ModeRealtime,
		Policy: core.PolicyOneShot, TerminalOutcomes: []string{},
	}, []byte(`{}`), testTime)
	if _, err := db.Store().CreateIntent(ctx, in); err != nil {
		t.Fatalf("create after up, down, up: %v", err)
	}
	if err := db.Migrate(ctx, MigrateStatus); err != nil {
		t.Fatalf("status: %v", err)
	}
	if err := db.Migrate(ctx, "sideways"); err == nil {
		t.Fatal("an unknown direction was accepted")
	}
}

func assertApplied(t *testing.T, db *DB, applied bool) {
	t.Helper()
	states, err := db.MigrationStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(states) == 0 {
		t.Fatal("no embedded migrations")
	}
	if path.Base(states[0].Source.Path) != "00001_init.sql" || states[0].Source.Version != 1 {
		t.Fatalf("first migration %+v, want 00001_init.sql version 1", states[0].Source)
	}
	for _, s := range states {
		isApplied := s.State == goose.StateApplied
		if isApplied != applied {
			t.Fatalf("migration %s applied=%v, want %v", s.Source.Path, isApplied, applied)
		}
		if isApplied == s.AppliedAt.IsZero() {
			t.Fatalf("migration %s applied=%v with applied_at %v", s.Source.Path, isApplied, s.AppliedAt)
		}
	}
}

// tables lists the schema's tables, without SQLite's and goose's own.
func tables(t *testing.T, db *DB) []string {
	t.Helper()
	var names string
	err := db.readDB.QueryRowContext(context.Background(), `SELECT COALESCE(group_concat(name, ' '), '') FROM (
    SELECT name FROM sqlite_schema
    WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'goose_db_version' ORDER BY name)`).Scan(&names)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(names)
}

// TestMigrationCarriesSentOver migrates a database with attempts of every
// kind to the version before the sent column, then up: an attempt closed
// with one of the executor's "not submitted" texts becomes unsent, every
// other attempt, open or closed, sent.
func TestMigrationCarriesSentOver(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "m.db"), Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectSQLite3, db.writeDB, migrations.SQLite(), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	const (
		notSubmitted   = "not submitted: leadership was lost before the gateway call"
		deadlinePassed = "not submitted: the acceptance deadline had passed"
	)
	if _, err := db.writeDB.ExecContext(ctx, `
INSERT INTO submission_intents (intent_id, submission_target, payload, contract, gateway_type, mode,
    status, created_at, next_due_at, attempt_count, last_modified_at)
VALUES ('i', 't', x'7b7d', '{}', 'sms', 'realtime', 'pending', 1, 1, 5, 1);
INSERT INTO submission_attempts (intent_id, attempt_number, holder_id, lease_epoch, started_at, finished_at, error, outcome_status)
VALUES ('i', 1, 'h', 1, 1, 2, ?, NULL),
       ('i', 2, 'h', 1, 3, 4, 'timeout', NULL),
       ('i', 3, 'h', 1, 5, 6, NULL, 'accepted'),
       ('i', 4, 'h', 1, 7, 8, ?, NULL),
       ('i', 5, 'h', 1, 9, NULL, NULL, NULL);`, notSubmitted, deadlinePassed); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, MigrateUp); err != nil {
		t.Fatal(err)
	}
	in, err := db.Store().GetIntent(ctx, "i")
	if err != nil {
		t.Fatal(err)
	}
	var sent []bool
	for _, a := range in.Attempts {
		sent = append(sent, a.Sent)
	}
	if want := []bool{false, true, true, false, true}; !slices.Equal(sent, want) {
		t.Errorf("sent after the migration %v, want %v (not submitted, timeout, outcome, deadline passed, open)", sent, want)
	}
}

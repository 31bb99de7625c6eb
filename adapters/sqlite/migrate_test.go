package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
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
	want := []string{"submission_attempts", "submission_intents", "submission_manager_leases", "submission_resubmissions"}
	if got := tables(t, db); !slices.Equal(got, want) {
		t.Fatalf("tables after up: %v, want %v", got, want)
	}
	// Up again is a no-op, not an error.
	if err := db.Migrate(ctx, MigrateUp); err != nil {
		t.Fatalf("second up: %v", err)
	}
	// Down rolls back one migration at a time: once per migration.
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
	if states[0].Name != "00001_init.sql" || states[0].Version != 1 {
		t.Fatalf("first migration %+v, want 00001_init.sql version 1", states[0])
	}
	for _, s := range states {
		if s.Applied != applied {
			t.Fatalf("migration %s applied=%v, want %v", s.Name, s.Applied, applied)
		}
		if s.Applied == s.AppliedAt.IsZero() {
			t.Fatalf("migration %s applied=%v with applied_at %v", s.Name, s.Applied, s.AppliedAt)
		}
	}
}

// tables lists the schema's tables, without SQLite's and goose's own.
func tables(t *testing.T, db *DB) []string {
	t.Helper()
	rows, err := db.readDB.QueryContext(context.Background(),
		`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'goose_db_version' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

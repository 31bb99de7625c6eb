package sqlserver

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/submissionmanager/submission-manager/core"
)

// schemaTables are the tables the migrations create, in name order.
var schemaTables = []string{"submission_attempts", "submission_console_secrets", "submission_console_sessions",
	"submission_gateway_pauses", "submission_instances", "submission_intent_events", "submission_intents", "submission_manager_leases", "submission_resubmissions"}

// schemaRoutines are the procedures and functions the migrations create,
// in name order.
var schemaRoutines = []string{"submission_acquire_lease", "submission_attempts_of", "submission_create_intent", "submission_finish_attempts",
	"submission_finish_items", "submission_get_intent", "submission_get_intents", "submission_insert_intents", "submission_intent_ids",
	"submission_json_text", "submission_resubmission_links", "submission_start_attempts", "submission_start_items"}

// tables lists the user tables of the test database, in name order.
func tables(t *testing.T, db *DB) []string {
	t.Helper()
	return namesOf(t, db, `SELECT name FROM sys.tables WHERE name LIKE 'submission%' ORDER BY name`)
}

// routines lists the procedures and functions of the test database, in
// name order.
func routines(t *testing.T, db *DB) []string {
	t.Helper()
	return namesOf(t, db, `SELECT name FROM sys.objects
WHERE type IN ('P', 'FN', 'IF', 'TF') AND name LIKE 'submission%' ORDER BY name`)
}

// namesOf runs query, which selects one column of names, on the plain
// pool. The rows are read one by one: Babelfish refuses STRING_AGG ...
// WITHIN GROUP (with the misleading "The string_agg function requires 2
// arguments").
func namesOf(t *testing.T, db *DB, query string) []string {
	t.Helper()
	rows, err := db.plain.QueryContext(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// assertStatus checks that every migration is applied, or none.
func assertStatus(t *testing.T, db *DB, applied bool) {
	t.Helper()
	states, err := db.MigrationStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(states) == 0 {
		t.Fatal("no migrations listed")
	}
	for _, s := range states {
		if isApplied := s.State == goose.StateApplied; isApplied != applied {
			t.Errorf("migration %s applied=%v, want %v", s.Source.Path, isApplied, applied)
		}
		if applied && s.AppliedAt.IsZero() {
			t.Errorf("applied migration %s has no time", s.Source.Path)
		}
	}
}

// TestMigrateUpDownUp runs the migrations up, down and up again on a real
// server, and checks the schema works after the round trip.
func TestMigrateUpDownUp(t *testing.T) {
	db := openTestDB(t, freshDatabase(t, databaseOptions{}))
	ctx := context.Background()
	want := schemaTables

	assertStatus(t, db, false)
	if err := db.Migrate(ctx, "up"); err != nil {
		t.Fatalf("up: %v", err)
	}
	if got := tables(t, db); !slices.Equal(got, want) {
		t.Fatalf("after up: tables %v, want %v", got, want)
	}
	if got := routines(t, db); !slices.Equal(got, schemaRoutines) {
		t.Fatalf("after up: procedures and functions %v, want %v", got, schemaRoutines)
	}
	assertStatus(t, db, true)
	if err := db.Migrate(ctx, "up"); err != nil {
		t.Fatalf("up with nothing pending: %v", err)
	}
	// Down rolls back the latest migration: once per migration empties the
	// database.
	states, err := db.MigrationStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range states {
		if err := db.Migrate(ctx, "down"); err != nil {
			t.Fatalf("down: %v", err)
		}
	}
	if got := tables(t, db); len(got) != 0 {
		t.Fatalf("after down: tables %v remain", got)
	}
	if got := routines(t, db); len(got) != 0 {
		t.Fatalf("after down: procedures and functions %v remain", got)
	}
	assertStatus(t, db, false)
	if err := db.Migrate(ctx, "down"); err == nil {
		t.Fatal("down with nothing applied succeeded")
	}
	if err := db.Migrate(ctx, "up"); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if got := tables(t, db); !slices.Equal(got, want) {
		t.Fatalf("after up again: tables %v, want %v", got, want)
	}
	if got := routines(t, db); !slices.Equal(got, schemaRoutines) {
		t.Fatalf("after up again: procedures and functions %v, want %v", got, schemaRoutines)
	}
	if err := db.Migrate(ctx, "status"); err != nil {
		t.Fatalf("status: %v", err)
	}
	if err := db.Migrate(ctx, "sideways"); err == nil {
		t.Fatal("an unknown direction was accepted")
	}
	in := core.NewIntent("after-round-trip", testContract, json.RawMessage(`{}`), time.Now())
	if _, err := db.Store().CreateIntent(ctx, in); err != nil {
		t.Fatalf("the store does not work after up, down, up: %v", err)
	}
}

// TestMigrateConcurrentInstances starts several instances' migrations at
// once on one empty database: the application lock serialises them, so
// every one succeeds and the schema is applied once.
func TestMigrateConcurrentInstances(t *testing.T) {
	dsn := freshDatabase(t, databaseOptions{})
	const instances = 4
	dbs := make([]*DB, instances)
	for i := range dbs {
		dbs[i] = openTestDB(t, dsn)
	}
	errs := make([]error, instances)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, db := range dbs {
		wg.Go(func() {
			<-start
			errs[i] = db.Migrate(context.Background(), "up")
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("instance %d: migrate up: %v", i, err)
		}
	}
	assertStatus(t, dbs[0], true)
	if got := tables(t, dbs[0]); !slices.Equal(got, schemaTables) {
		t.Fatalf("tables %v after concurrent migrations", got)
	}
}

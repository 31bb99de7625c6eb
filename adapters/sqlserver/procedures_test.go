package sqlserver

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

// columnNames splits a column list constant (detailedIntentColumns,
// attemptColumns) into its names.
func columnNames(list string) []string {
	var names []string
	for _, c := range strings.Split(list, ",") {
		names = append(names, strings.TrimSpace(c))
	}
	return names
}

// resultColumns runs query with args and returns the column names of each
// result set it answers.
func resultColumns(t *testing.T, db *DB, query string, args ...any) [][]string {
	t.Helper()
	rows, err := db.queries.QueryContext(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var sets [][]string
	for {
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, cols)
		for rows.Next() {
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return sets
}

// TestIntakeProceduresAnswerTheReadColumns holds the procedures of
// migrations 00015 and 00016, which spell their select lists out, to the column
// lists readDetailedIntents and readAttempts scan by position: a column
// added to one and not the other would shift every field after it.
func TestIntakeProceduresAnswerTheReadColumns(t *testing.T) {
	db, _ := migratedDB(t, databaseOptions{})
	ctx := context.Background()
	intent, attempts := columnNames(detailedIntentColumns), columnNames(attemptColumns)
	params, err := insertIntentParams(newTestIntent("columns-1"))
	if err != nil {
		t.Fatal(err)
	}
	create := func() [][]string {
		return resultColumns(t, db, createIntentSQL, setString(params.IntentID), setString(params.SubmissionTarget),
			params.Payload, setString(params.Contract), setString(params.GatewayType), setString(params.Mode),
			params.CreatedAt, params.NextDueAt, params.NotBefore, setString(""))
	}
	batch, err := insertIntentParams(newTestIntent("columns-2"))
	if err != nil {
		t.Fatal(err)
	}
	insert := func() [][]string {
		query, args, err := insertRequest([]sqlserverdb.InsertIntentParams{batch})
		if err != nil || query != insertIntentsProcSQL {
			t.Fatalf("the batch of one ASCII payload is sent as %q (%v), want the procedure's call", query, err)
		}
		return resultColumns(t, db, query, args...)
	}
	for name, c := range map[string]struct {
		got  func() [][]string
		want [][]string
	}{
		"dbo.submission_create_intent, new":     {create, [][]string{{"intent_id"}, intent, attempts}},
		"dbo.submission_create_intent, repeat":  {create, [][]string{{"intent_id"}, intent, attempts}},
		"dbo.submission_insert_intents, new":    {insert, [][]string{{"intent_id"}, intent, attempts}},
		"dbo.submission_insert_intents, repeat": {insert, [][]string{{"intent_id"}, intent, attempts}},
		"dbo.submission_get_intent": {func() [][]string {
			return resultColumns(t, db, getIntentSQL, setString("columns-1"))
		}, [][]string{intent, attempts}},
		"dbo.submission_get_intents": {func() [][]string {
			return resultColumns(t, db, getIntentsSQL, setString(`["columns-1"]`))
		}, [][]string{intent, attempts}},
		"dbo.submission_attempts_of": {func() [][]string {
			return resultColumns(t, db, attemptsOfIDsSQL, setString(`["columns-1"]`))
		}, [][]string{attempts}},
		"dbo.submission_resubmission_links": {func() [][]string {
			return resultColumns(t, db, resubmissionLinksSQL, setString(`["columns-1"]`))
		}, [][]string{{"intent_id", "resubmitted_as"}}},
	} {
		if got := c.got(); !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("%s answers the columns\n%v\nwant\n%v", name, got, c.want)
		}
	}
	for _, id := range []string{"columns-1", "columns-2"} {
		if _, err := db.Store().GetIntent(ctx, id); err != nil {
			t.Fatalf("the intent the procedures stored: %v", err)
		}
	}
}

// TestReadsOfManyIntentsNameAwkwardIDs reads intents whose ids JSON must
// escape, that look like jsonText's own codes, or that differ only in
// case, through both procedures that take a JSON list of intentIds
// (GetIntents, a listing page's attempts): each comes back once, with its
// own attempt, and a spelling of one never finds another.
func TestReadsOfManyIntentsNameAwkwardIDs(t *testing.T) {
	db, _ := migratedDB(t, databaseOptions{})
	s := db.Store()
	ctx := context.Background()
	ids := []string{`a"b`, `a\b`, `~1`, `"`, `~0`, `~`, `x~3Ay`, "é<&>👋", "Case", "case", strings.Repeat("~", 255)}
	lease := leasetest.MustAcquire(t, db.Leases(), core.DefaultLeaseName, "sm-test", time.Hour)
	at := time.Date(2026, 3, 14, 9, 1, 0, 0, time.UTC)
	for i, id := range ids {
		if _, err := s.CreateIntent(ctx, newTestIntent(id)); err != nil {
			t.Fatalf("CreateIntent(%q): %v", id, err)
		}
		if err := s.StartAttempt(ctx, ports.StartAttemptParams{Fence: lease.Fence(), IntentID: id, Number: 1,
			StartedAt: at.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatalf("StartAttempt(%q): %v", id, err)
		}
	}
	// Every id but the first, and ids stored nowhere: "~" spelled is "~0",
	// which is stored, and must not be found for "~0" asked unspelled.
	asked := append(slices.Clone(ids[1:]), `a"`, "CASE", "~00")
	got, err := s.GetIntents(ctx, asked)
	if err != nil {
		t.Fatal(err)
	}
	var read []string
	for _, in := range got {
		read = append(read, in.IntentID)
		i := slices.Index(ids, in.IntentID)
		if len(in.Attempts) != 1 || !in.Attempts[0].StartedAt.Equal(at.Add(time.Duration(i)*time.Second)) {
			t.Errorf("GetIntents: %q read with attempts %+v, want its own one", in.IntentID, in.Attempts)
		}
	}
	slices.Sort(read)
	want := slices.Sorted(slices.Values(ids[1:]))
	if !slices.Equal(read, want) {
		t.Errorf("GetIntents read %q, want %q", read, want)
	}

	byIntent, err := db.attemptsOf(ctx, asked)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range asked {
		i := slices.Index(ids, id)
		switch rows := byIntent[id]; {
		case i <= 0 && len(rows) != 0:
			t.Errorf("attemptsOf: %q, not asked or not stored, has %d attempts", id, len(rows))
		case i > 0 && (len(rows) != 1 || !rows[0].StartedAt.Equal(at.Add(time.Duration(i)*time.Second))):
			t.Errorf("attemptsOf: %q has attempts %+v, want its own one", id, rows)
		}
	}
	if len(byIntent) != len(ids)-1 {
		t.Errorf("attemptsOf read the attempts of %d intents, want %d", len(byIntent), len(ids)-1)
	}
}

package sqlserver

import (
	"context"
	"slices"
	"strings"
	"testing"
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
// migration 00015, which spell their select lists out, to the column
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
	for name, c := range map[string]struct {
		got  func() [][]string
		want [][]string
	}{
		"dbo.submission_create_intent, new":    {create, [][]string{{"intent_id"}, intent, attempts}},
		"dbo.submission_create_intent, repeat": {create, [][]string{{"intent_id"}, intent, attempts}},
		"dbo.submission_get_intent": {func() [][]string {
			return resultColumns(t, db, getIntentSQL, setString("columns-1"))
		}, [][]string{intent, attempts}},
	} {
		if got := c.got(); !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("%s answers the columns\n%v\nwant\n%v", name, got, c.want)
		}
	}
	if _, err := db.Store().GetIntent(ctx, "columns-1"); err != nil {
		t.Fatalf("the intent the procedures stored: %v", err)
	}
}

package changes_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/changes"
	"github.com/submissionmanager/submission-manager/ports"
)

// feed serves rows in cursor order, as a store's ListChanged does.
type feed struct {
	rows  []ports.ScheduleRow
	asked []ports.ChangeCursor
}

func (f *feed) ListChanged(_ context.Context, p ports.ListChangedParams) ([]ports.ScheduleRow, error) {
	f.asked = append(f.asked, p.After)
	var out []ports.ScheduleRow
	for _, r := range f.rows {
		c := ports.ChangeCursor{LastModifiedAt: r.LastModifiedAt, IntentID: r.IntentID}
		if changes.After(c, p.After) && len(out) < p.Limit {
			out = append(out, r)
		}
	}
	return out, nil
}

var t0 = time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)

func row(id string, at time.Duration) ports.ScheduleRow {
	return ports.ScheduleRow{IntentID: id, LastModifiedAt: t0.Add(at)}
}

// TestFollowPagesThroughSharedTimestamps pins that rows sharing a change
// marker across page boundaries are all seen, in order, and that the cursor
// ends at the last row.
func TestFollowPagesThroughSharedTimestamps(t *testing.T) {
	f := &feed{rows: []ports.ScheduleRow{row("a", 0), row("b", time.Second), row("c", time.Second), row("d", time.Second), row("e", 2*time.Second)}}
	var cursor ports.ChangeCursor
	var seen []string
	if err := changes.Follow(t.Context(), f, &cursor, 0, 2, func(r ports.ScheduleRow) { seen = append(seen, r.IntentID) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []string{"a", "b", "c", "d", "e"}) || cursor.IntentID != "e" || len(f.asked) != 3 {
		t.Fatalf("seen %v, cursor %+v after %d pages; want a..e, cursor at e, 3 pages", seen, cursor, len(f.asked))
	}
}

// TestFollowLooksBackWithoutMovingTheCursorBack pins the look-back: a
// follow starts that far behind the cursor and sees older rows again, but
// the cursor never moves backwards.
func TestFollowLooksBackWithoutMovingTheCursorBack(t *testing.T) {
	f := &feed{rows: []ports.ScheduleRow{row("late", 4*time.Second), row("x", 5*time.Second)}}
	cursor := ports.ChangeCursor{LastModifiedAt: t0.Add(6 * time.Second), IntentID: "z"}
	var seen []string
	if err := changes.Follow(t.Context(), f, &cursor, 3*time.Second, 10, func(r ports.ScheduleRow) { seen = append(seen, r.IntentID) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []string{"late", "x"}) {
		t.Fatalf("seen %v, want the rows inside the look-back", seen)
	}
	if cursor.IntentID != "z" || !cursor.LastModifiedAt.Equal(t0.Add(6*time.Second)) {
		t.Fatalf("cursor moved back to %+v", cursor)
	}
	if !f.asked[0].LastModifiedAt.Equal(t0.Add(3*time.Second)) || f.asked[0].IntentID != "" {
		t.Fatalf("first read after %+v, want 3 s behind the cursor", f.asked[0])
	}
}

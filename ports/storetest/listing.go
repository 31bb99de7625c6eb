package storetest

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

func testListPendingPaging(t *testing.T, h Harness) {
	f := leader(t, h)
	all := ids("intent", 23)
	// Insert in a shuffled order: the listing orders by intentId, not by
	// insertion.
	shuffled := slices.Clone(all)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for i, id := range shuffled {
		c := smsContract("alerts")
		if i%2 == 0 {
			c = pushContract("news")
		}
		mustCreate(t, h.Store, newIntent(id, c, `{}`, at(i)))
	}
	var want []string
	for i, id := range all {
		if i%4 == 3 {
			complete(t, h.Store, accept(f, id, 1, at(100+i)))
			continue
		}
		want = append(want, id)
	}
	var got []ports.ScheduleRow
	after := ""
	for pages := 0; ; pages++ {
		if pages > len(all) {
			t.Fatal("ListPending never reached an empty page")
		}
		page, err := h.Store.ListPending(t.Context(), ports.ListPendingParams{AfterIntentID: after, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 5 {
			t.Fatalf("page of %d rows for limit 5", len(page))
		}
		if len(page) == 0 {
			break
		}
		got = append(got, page...)
		after = page[len(page)-1].IntentID
	}
	gotIDs := make([]string, len(got))
	for i, r := range got {
		gotIDs[i] = r.IntentID
		in := mustGet(t, h.Store, r.IntentID)
		if r.Status != core.StatusPending || r.Mode != in.Contract.Mode || !r.NextDueAt.Equal(in.NextDueAt) ||
			!r.LastModifiedAt.Equal(in.LastModifiedAt) {
			t.Errorf("row %+v disagrees with intent (status %s, mode %s, due %v, modified %v)",
				r, in.Status, in.Contract.Mode, in.NextDueAt, in.LastModifiedAt)
		}
	}
	if !slices.Equal(gotIDs, want) {
		t.Fatalf("pending ids %v, want %v", gotIDs, want)
	}
}

func testLatestChangeEmpty(t *testing.T, h Harness) {
	c, err := h.Store.LatestChange(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if c != (ports.ChangeCursor{}) {
		t.Fatalf("LatestChange of an empty store = %+v, want the zero cursor", c)
	}
	rows, err := h.Store.ListChanged(t.Context(), ports.ListChangedParams{Limit: 10})
	if err != nil || len(rows) != 0 {
		t.Fatalf("ListChanged of an empty store: %d rows, err %v", len(rows), err)
	}
}

// readChanges pages through every change after the cursor with the given
// page size and returns the rows and the cursor after the last one.
func readChanges(t *testing.T, s ports.Store, after ports.ChangeCursor, limit int) ([]ports.ScheduleRow, ports.ChangeCursor) {
	t.Helper()
	var rows []ports.ScheduleRow
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("ListChanged never reached an empty page")
		}
		page, err := s.ListChanged(t.Context(), ports.ListChangedParams{After: after, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > limit {
			t.Fatalf("page of %d rows for limit %d", len(page), limit)
		}
		if len(page) == 0 {
			return rows, after
		}
		rows = append(rows, page...)
		last := page[len(page)-1]
		after = ports.ChangeCursor{LastModifiedAt: last.LastModifiedAt, IntentID: last.IntentID}
	}
}

// assertCursorOrder checks that rows are strictly ascending in
// (last_modified_at, intent_id), so no row is seen twice in one pass.
func assertCursorOrder(t *testing.T, rows []ports.ScheduleRow) {
	t.Helper()
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		if c := a.LastModifiedAt.Compare(b.LastModifiedAt); c > 0 || (c == 0 && a.IntentID >= b.IntentID) {
			t.Fatalf("rows %d and %d out of cursor order: (%v, %s) then (%v, %s)",
				i-1, i, a.LastModifiedAt, a.IntentID, b.LastModifiedAt, b.IntentID)
		}
	}
}

func rowIDs(rows []ports.ScheduleRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.IntentID
	}
	return out
}

func testListChangedPaging(t *testing.T, h Harness) {
	f := leader(t, h)
	all := ids("intent", 17)
	for i, id := range all {
		mustCreate(t, h.Store, newIntent(id, smsContract("alerts"), `{}`, at(i)))
	}
	rows, cursor := readChanges(t, h.Store, ports.ChangeCursor{}, 4)
	assertCursorOrder(t, rows)
	if got := rowIDs(rows); !slices.Equal(slices.Sorted(slices.Values(got)), all) {
		t.Fatalf("changes %v, want each of %v once", got, all)
	}
	latest, err := h.Store.LatestChange(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !latest.LastModifiedAt.Equal(cursor.LastModifiedAt) || latest.IntentID != cursor.IntentID {
		t.Fatalf("LatestChange %+v, want the last change read %+v", latest, cursor)
	}

	// Writes after the cursor show up after it, each intent once, with its
	// new state; nothing else does.
	complete(t, h.Store, accept(f, all[9], 1, at(100)))
	start(t, h.Store, f, all[2], 1, at(101))
	rows, cursor = readChanges(t, h.Store, cursor, 4)
	assertCursorOrder(t, rows)
	if got := rowIDs(rows); !slices.Equal(slices.Sorted(slices.Values(got)), []string{all[2], all[9]}) {
		t.Fatalf("changes after the cursor: %v, want %s and %s", got, all[2], all[9])
	}
	for _, r := range rows {
		want := core.StatusPending
		if r.IntentID == all[9] {
			want = core.StatusAccepted
			if !r.NextDueAt.IsZero() {
				t.Errorf("terminal row %s has next due %v", r.IntentID, r.NextDueAt)
			}
		}
		if r.Status != want {
			t.Errorf("row %s has status %s, want %s", r.IntentID, r.Status, want)
		}
	}
	if rows, _ := readChanges(t, h.Store, cursor, 4); len(rows) != 0 {
		t.Fatalf("%d changes after the latest cursor, want none", len(rows))
	}
}

func testListChangedSharedTimestamp(t *testing.T, h Harness) {
	before := ids("a", 5)
	shared := ids("m", 60)
	after := ids("z", 5)
	for i, id := range before {
		mustCreate(t, h.Store, newIntent(id, smsContract("alerts"), `{}`, at(i)))
	}
	// Created in reverse order, so insertion order disagrees with id order.
	for i, id := range slices.Backward(shared) {
		mustCreate(t, h.Store, newIntent(id, smsContract("alerts"), `{}`, at(100+i)))
	}
	h.ShareLastModified(t, shared)
	for i, id := range after {
		mustCreate(t, h.Store, newIntent(id, smsContract("alerts"), `{}`, at(200+i)))
	}

	var want []string
	want = append(append(append(want, before...), shared...), after...)
	// Page sizes that cut the shared group at many different places.
	for _, limit := range []int{1, 7, 13, 59, 61, 500} {
		rows, _ := readChanges(t, h.Store, ports.ChangeCursor{}, limit)
		assertCursorOrder(t, rows)
		got := rowIDs(rows)
		if !slices.Equal(got, want) {
			t.Fatalf("limit %d: read %d changes %v, want %d %v", limit, len(got), got, len(want), want)
		}
		stamp := rows[len(before)].LastModifiedAt
		for _, r := range rows[len(before) : len(before)+len(shared)] {
			if !r.LastModifiedAt.Equal(stamp) {
				t.Fatalf("ShareLastModified left %s at %v, others at %v: the harness must give one value", r.IntentID, r.LastModifiedAt, stamp)
			}
		}
	}

	// A cursor in the middle of the shared group resumes exactly after it.
	rows, _ := readChanges(t, h.Store, ports.ChangeCursor{}, 500)
	mid := rows[len(before)+29]
	resumed, _ := readChanges(t, h.Store, ports.ChangeCursor{LastModifiedAt: mid.LastModifiedAt, IntentID: mid.IntentID}, 9)
	if got, want := rowIDs(resumed), want[len(before)+30:]; !slices.Equal(got, want) {
		t.Fatalf("resumed after %s: %v, want %v", mid.IntentID, got, want)
	}
}

func testListIntents(t *testing.T, h Harness) {
	f := leader(t, h)
	var want []core.Intent
	// Three intents share each creation time: the id breaks the tie.
	for i, id := range ids("intent", 14) {
		in := newIntent(id, smsContract("alerts"), `{"i":1}`, at(i/3))
		mustCreate(t, h.Store, in)
		want = append(want, in)
	}
	complete(t, h.Store, accept(f, "intent-004", 1, at(50)))
	start(t, h.Store, f, "intent-007", 1, at(51))
	sortNewestFirst(want)

	got := listAll(t, h.Store, ports.ListIntentsParams{Limit: 4})
	if gotIDs, wantIDs := intentIDs(got), intentIDs(want); !slices.Equal(gotIDs, wantIDs) {
		t.Fatalf("newest first: %v, want %v", gotIDs, wantIDs)
	}
	for _, in := range got {
		assertIntent(t, in, mustGet(t, h.Store, in.IntentID))
	}
	// A page size that divides the total exactly still ends with Next nil.
	if got := listAll(t, h.Store, ports.ListIntentsParams{Limit: 7}); len(got) != 14 {
		t.Fatalf("limit 7: %d intents, want 14", len(got))
	}
}

func testListIntentsFilters(t *testing.T, h Harness) {
	f := leader(t, h)
	var all []core.Intent
	for i, id := range ids("intent", 24) {
		c := smsContract("alerts")
		if i%3 == 0 {
			c = pushContract("news")
		}
		in := newIntent(id, c, `{}`, at(i/2))
		mustCreate(t, h.Store, in)
		switch i % 4 {
		case 1:
			complete(t, h.Store, accept(f, id, 1, at(100+i)))
			in = mustGet(t, h.Store, id)
		case 2:
			complete(t, h.Store, exhaust(f, id, 1, at(100+i)))
			in = mustGet(t, h.Store, id)
		}
		all = append(all, in)
	}
	sortNewestFirst(all)
	for _, p := range []ports.ListIntentsParams{
		{Status: core.StatusPending},
		{Status: core.StatusAccepted},
		{Status: core.StatusRejected},
		{SubmissionTarget: "news"},
		{SubmissionTarget: "alerts"},
		{SubmissionTarget: "unknown"},
		{Status: core.StatusExhausted, SubmissionTarget: "alerts"},
		{Status: core.StatusPending, SubmissionTarget: "news"},
	} {
		var want []string
		for _, in := range all {
			if (p.Status == "" || in.Status == p.Status) && (p.SubmissionTarget == "" || in.SubmissionTarget == p.SubmissionTarget) {
				want = append(want, in.IntentID)
			}
		}
		p.Limit = 3
		got := listAll(t, h.Store, p)
		if gotIDs := intentIDs(got); !slices.Equal(gotIDs, want) {
			t.Errorf("status %q target %q: %v, want %v", p.Status, p.SubmissionTarget, gotIDs, want)
		}
		for _, in := range got {
			if len(in.Attempts) != in.AttemptCount {
				t.Errorf("listed intent %s carries %d attempts, its count is %d", in.IntentID, len(in.Attempts), in.AttemptCount)
			}
		}
	}
}

// listAll pages through a listing as the service does and checks the query
// shape on the way: at most Limit intents, each strictly after Before.
func listAll(t *testing.T, s ports.Store, p ports.ListIntentsParams) []core.Intent {
	t.Helper()
	var out []core.Intent
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("ListIntents never returned a short page")
		}
		got, err := s.ListIntents(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > p.Limit {
			t.Fatalf("ListIntents returned %d intents, the limit is %d", len(got), p.Limit)
		}
		for _, in := range got {
			if p.Before != nil && !(in.CreatedAt.Before(p.Before.CreatedAt) ||
				in.CreatedAt.Equal(p.Before.CreatedAt) && in.IntentID < p.Before.IntentID) {
				t.Fatalf("intent (%v, %s) is not strictly after the position %+v", in.CreatedAt, in.IntentID, *p.Before)
			}
		}
		out = append(out, got...)
		if len(got) < p.Limit {
			return out
		}
		last := got[len(got)-1]
		p.Before = &ports.IntentPosition{CreatedAt: last.CreatedAt, IntentID: last.IntentID}
	}
}

func sortNewestFirst(in []core.Intent) {
	slices.SortFunc(in, func(a, b core.Intent) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.IntentID, a.IntentID)
	})
}

func intentIDs(in []core.Intent) []string {
	out := make([]string, len(in))
	for i, x := range in {
		out[i] = x.IntentID
	}
	return out
}

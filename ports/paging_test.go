package ports_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// sliceLister answers the store's query shape over intents held newest
// first, and counts its calls.
type sliceLister struct {
	intents []core.Intent
	calls   int
}

func (l *sliceLister) list(_ context.Context, p ports.ListIntentsParams) ([]core.Intent, error) {
	l.calls++
	newer := func(in core.Intent, pos ports.IntentPosition) bool {
		if c := in.CreatedAt.Compare(pos.CreatedAt); c != 0 {
			return c > 0
		}
		return in.IntentID > pos.IntentID
	}
	if p.After != nil {
		var out []core.Intent
		for _, in := range slices.Backward(l.intents) {
			if newer(in, *p.After) && len(out) < p.Limit {
				out = append(out, in)
			}
		}
		slices.Reverse(out)
		return out, nil
	}
	var out []core.Intent
	for _, in := range l.intents {
		if (p.Before == nil || !newer(in, *p.Before) && in.IntentID != p.Before.IntentID) && len(out) < p.Limit {
			out = append(out, in)
		}
	}
	return out, nil
}

// tenIntents are i-9 (newest) to i-0, one second apart.
func tenIntents() *sliceLister {
	l := &sliceLister{}
	for i := 9; i >= 0; i-- {
		l.intents = append(l.intents, core.Intent{IntentID: fmt.Sprintf("i-%d", i), CreatedAt: time.Unix(int64(1000+i), 0).UTC()})
	}
	return l
}

func pageIDs(p ports.IntentPage) []string {
	out := make([]string, len(p.Intents))
	for i, in := range p.Intents {
		out[i] = in.IntentID
	}
	return out
}

func mustPage(t *testing.T, l *sliceLister, p ports.ListIntentsParams) ports.IntentPage {
	t.Helper()
	page, err := ports.PageIntents(t.Context(), l.list, p)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// TestPageIntentsBothWays walks forward to the end and back to the start
// by the positions the pages give, and sees the same pages both ways.
func TestPageIntentsBothWays(t *testing.T) {
	l := tenIntents()
	first := mustPage(t, l, ports.ListIntentsParams{Limit: 4})
	if got := pageIDs(first); !slices.Equal(got, []string{"i-9", "i-8", "i-7", "i-6"}) || first.Prev != nil || first.Next == nil {
		t.Fatalf("first page %v prev %v next %v", got, first.Prev, first.Next)
	}
	second := mustPage(t, l, ports.IntentCursor{Position: *first.Next}.Continue(ports.ListIntentsParams{Limit: 4}))
	third := mustPage(t, l, ports.IntentCursor{Position: *second.Next}.Continue(ports.ListIntentsParams{Limit: 4}))
	if got := pageIDs(third); !slices.Equal(got, []string{"i-1", "i-0"}) || third.Next != nil || third.Prev == nil {
		t.Fatalf("last page %v prev %v next %v", got, third.Prev, third.Next)
	}
	back := mustPage(t, l, ports.IntentCursor{Position: *third.Prev, Prev: true}.Continue(ports.ListIntentsParams{Limit: 4}))
	if got, want := pageIDs(back), pageIDs(second); !slices.Equal(got, want) || back.Prev == nil || back.Next == nil {
		t.Fatalf("back from the last page: %v prev %v next %v, want the second page %v with both links", got, back.Prev, back.Next, want)
	}
	if *back.Next != *second.Next {
		t.Fatalf("the second page read backwards continues at %+v, forwards at %+v", *back.Next, *second.Next)
	}
	top := mustPage(t, l, ports.IntentCursor{Position: *back.Prev, Prev: true}.Continue(ports.ListIntentsParams{Limit: 4}))
	if got := pageIDs(top); !slices.Equal(got, pageIDs(first)) || top.Prev != nil || *top.Next != *first.Next {
		t.Fatalf("back to the top: %v prev %v, want the first page without prev", got, top.Prev)
	}
}

// TestPageIntentsShortPreviousPageIsTheFirst: going back from a position
// with fewer newer intents than a page reads the first page, full.
func TestPageIntentsShortPreviousPageIsTheFirst(t *testing.T) {
	l := tenIntents()
	pos := ports.IntentPosition{CreatedAt: l.intents[2].CreatedAt, IntentID: l.intents[2].IntentID} // i-7
	page := mustPage(t, l, ports.IntentCursor{Position: pos, Prev: true}.Continue(ports.ListIntentsParams{Limit: 4}))
	if got := pageIDs(page); !slices.Equal(got, []string{"i-9", "i-8", "i-7", "i-6"}) || page.Prev != nil || page.Next == nil {
		t.Fatalf("short previous page read as %v prev %v next %v, want the full first page", got, page.Prev, page.Next)
	}
	if l.calls != 2 {
		t.Fatalf("%d store calls, want 2 (the short page, then the first)", l.calls)
	}
	// Exactly a page of newer intents is the first page already: no
	// second read.
	l.calls = 0
	pos = ports.IntentPosition{CreatedAt: l.intents[4].CreatedAt, IntentID: l.intents[4].IntentID} // i-5
	page = mustPage(t, l, ports.IntentCursor{Position: pos, Prev: true}.Continue(ports.ListIntentsParams{Limit: 4}))
	if got := pageIDs(page); !slices.Equal(got, []string{"i-9", "i-8", "i-7", "i-6"}) || page.Prev != nil || l.calls != 1 {
		t.Fatalf("a full previous page: %v prev %v after %d calls", got, page.Prev, l.calls)
	}
}

// TestPageIntentsLimitOne pages one intent at a time both ways.
func TestPageIntentsLimitOne(t *testing.T) {
	l := tenIntents()
	page := mustPage(t, l, ports.ListIntentsParams{Limit: 1})
	var seen []string
	for {
		seen = append(seen, pageIDs(page)...)
		if page.Next == nil {
			break
		}
		page = mustPage(t, l, ports.IntentCursor{Position: *page.Next}.Continue(ports.ListIntentsParams{Limit: 1}))
	}
	var back []string
	for {
		back = append(back, pageIDs(page)...)
		if page.Prev == nil {
			break
		}
		page = mustPage(t, l, ports.IntentCursor{Position: *page.Prev, Prev: true}.Continue(ports.ListIntentsParams{Limit: 1}))
	}
	slices.Reverse(back)
	if len(seen) != 10 || !slices.Equal(seen, back) {
		t.Fatalf("forwards %v, backwards %v", seen, back)
	}
}

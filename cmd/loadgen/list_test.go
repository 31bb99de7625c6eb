package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

// fakeListing serves the run's intents, every one final: GET /v1/intents
// as pages of the intents whose id starts with the intentIdPrefix asked
// for (the cursor is the offset), and GET /v1/intents/{id} one at a time.
// It counts both kinds of read.
type fakeListing struct {
	ids []string

	mu       sync.Mutex
	pages    int
	singles  int
	prefixes map[string]bool
}

func (f *fakeListing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	created := time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)
	intent := func(id string) client.Intent {
		return client.Intent{IntentId: id, Status: client.IntentStatusAccepted, CreatedAt: created, Attempts: []client.Attempt{}}
	}
	w.Header().Set("Content-Type", "application/json")
	if id, ok := strings.CutPrefix(r.URL.Path, "/v1/intents/"); ok {
		f.mu.Lock()
		f.singles++
		f.mu.Unlock()
		_ = json.NewEncoder(w).Encode(intent(id))
		return
	}
	q := r.URL.Query()
	prefix := q.Get("intentIdPrefix")
	limit, _ := strconv.Atoi(q.Get("limit"))
	offset, _ := strconv.Atoi(q.Get("cursor"))
	f.mu.Lock()
	f.pages++
	f.prefixes[prefix] = true
	f.mu.Unlock()
	var page client.IntentPage
	page.Intents = []client.Intent{}
	matched := 0
	for _, id := range f.ids {
		if !strings.HasPrefix(id, prefix) {
			continue
		}
		if matched >= offset && len(page.Intents) < limit {
			page.Intents = append(page.Intents, intent(id))
		}
		matched++
	}
	if next := offset + len(page.Intents); next < matched {
		cursor := strconv.Itoa(next)
		page.NextCursor = &cursor
	}
	_ = json.NewEncoder(w).Encode(page)
}

// TestWaitListsALargeRun checks that the wait reads a run of more than
// listAbove intents in pages of the run's prefix, not one GET each (which
// took minutes after the long paced runs), reports every one of them as it
// finally stands, and leaves out another run's intents whose ids begin
// with this run's id.
func TestWaitListsALargeRun(t *testing.T) {
	const count = listAbove + listPage + 7
	var ids []string
	for i := range count {
		ids = append(ids, fmt.Sprintf("run-%07d", i))
	}
	f := &fakeListing{ids: append(ids, "run2-0000000", "run2-0000001"), prefixes: map[string]bool{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg := config{URL: srv.URL, Concurrency: 8, WaitTimeout: 10 * time.Second, RunID: "run"}
	c, closeIdle, err := newClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeIdle)
	intents, unfinished, err := waitAll(t.Context(), c, cfg, ids, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if unfinished != 0 || len(intents) != count {
		t.Fatalf("%d intents reported, %d unfinished; want %d and 0", len(intents), unfinished, count)
	}
	for _, in := range intents {
		if in.Status != client.IntentStatusAccepted || !strings.HasPrefix(in.IntentId, "run-") {
			t.Fatalf("reported %s as %s", in.IntentId, in.Status)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	wantPages := (count + listPage - 1) / listPage
	if f.pages != wantPages || f.singles > 1 || len(f.prefixes) != 1 || !f.prefixes["run-"] {
		t.Fatalf("%d pages (prefixes %v) and %d single reads for %d intents; want %d pages of run- and only the long poll's read",
			f.pages, f.prefixes, f.singles, count, wantPages)
	}
}

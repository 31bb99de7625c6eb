package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeIntents serves GET /v1/intents/{id}: every intent but those in final
// stays pending until done is closed, and a read of a pending one with
// Prefer: wait=N is held until then (or N seconds), as the service's long
// poll is. It counts the reads.
type fakeIntents struct {
	done  chan struct{}
	final map[string]bool
	// finishAfter, when positive, has the fake finish every intent (close
	// done) as soon as the wait showed how it waits: at its first long
	// poll, or at read number finishAfter without one, a wait that reads
	// the intents over and over.
	finishAfter int
	finish      sync.Once

	mu      sync.Mutex
	reads   int
	waiting int
}

// finishAll ends every intent, once.
func (f *fakeIntents) finishAll() { f.finish.Do(func() { close(f.done) }) }

func (f *fakeIntents) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, ok := strings.CutPrefix(r.URL.Path, "/v1/intents/")
	if !ok || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	f.reads++
	readsOver := f.finishAfter > 0 && f.reads >= f.finishAfter
	f.mu.Unlock()
	if readsOver {
		f.finishAll()
	}
	var wait int
	if _, err := fmt.Sscanf(r.Header.Get("Prefer"), "wait=%d", &wait); err == nil && wait > 0 && !f.final[id] {
		f.mu.Lock()
		f.waiting++
		f.mu.Unlock()
		if f.finishAfter > 0 {
			f.finishAll()
		}
		select {
		case <-f.done:
		case <-time.After(time.Duration(wait) * time.Second):
		case <-r.Context().Done():
		}
	}
	status := "pending"
	select {
	case <-f.done:
		status = "accepted"
	default:
		if f.final[id] {
			status = "accepted"
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"intentId": id, "status": status, "attempts": []any{}})
}

// TestWaitDoesNotReadEveryIntentWhileTheyRun checks that waiting for
// execution holds one long poll instead of reading every intent again and
// again, which would load the service it measures, and that it still reports
// every intent as it finally stands. The intents run until the wait asks for
// a long poll, or until it read more often than the test allows.
func TestWaitDoesNotReadEveryIntentWhileTheyRun(t *testing.T) {
	const count = 200
	maxReads := count + 2
	f := &fakeIntents{done: make(chan struct{}), finishAfter: maxReads + 1}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg := config{URL: srv.URL, Concurrency: 8, WaitTimeout: 10 * time.Second}
	c, closeIdle, err := newClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeIdle)
	ids := make([]string, count)
	for i := range ids {
		ids[i] = fmt.Sprintf("w-%03d", i)
	}
	intents, unfinished, err := waitAll(context.Background(), c, cfg, ids, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if unfinished != 0 || len(intents) != len(ids) {
		t.Fatalf("%d intents reported, %d unfinished; want %d and 0", len(intents), unfinished, len(ids))
	}
	for _, in := range intents {
		if in.Status != "accepted" {
			t.Fatalf("intent %s reported %s, want its final status", in.IntentId, in.Status)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.waiting == 0 || f.reads > maxReads {
		t.Fatalf("%d reads (%d long polls) for %d intents: the wait reads the intents while they run", f.reads, f.waiting, len(ids))
	}
}

// TestWaitGivesUpAtItsTimeout checks that an intent that never finishes is
// reported unfinished once --wait-timeout passed, long polls included,
// without waiting much past it, and that the report still has how every
// intent stands: the newest one timed out in its long poll, and the older
// one, final all along, was never read before.
func TestWaitGivesUpAtItsTimeout(t *testing.T) {
	f := &fakeIntents{done: make(chan struct{}), final: map[string]bool{"a": true}}
	srv := httptest.NewServer(f)
	t.Cleanup(func() { close(f.done); srv.Close() })
	cfg := config{URL: srv.URL, Concurrency: 2, WaitTimeout: 1500 * time.Millisecond}
	c, closeIdle, err := newClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeIdle)
	start := time.Now()
	intents, unfinished, err := waitAll(context.Background(), c, cfg, []string{"a", "b"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > cfg.WaitTimeout+pollPause+200*time.Millisecond {
		t.Fatalf("the wait took %s with a %s timeout", took, cfg.WaitTimeout)
	}
	got := map[string]string{}
	for _, in := range intents {
		got[in.IntentId] = string(in.Status)
	}
	if unfinished != 1 || got["a"] != "accepted" || got["b"] != "pending" {
		t.Fatalf("%d unfinished, statuses %v; want 1, a accepted and b pending", unfinished, got)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakePending serves GET /v1/intents?status=pending&limit=1: one pending
// intent until done is closed, then none. It counts the reads.
type fakePending struct {
	done  chan struct{}
	reads atomic.Int64
}

func (f *fakePending) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.reads.Add(1)
	q := r.URL.Query()
	if r.URL.Path != "/v1/intents" || q.Get("status") != "pending" || q.Get("limit") != "1" {
		http.Error(w, "unexpected request "+r.URL.String(), http.StatusBadRequest)
		return
	}
	page := map[string]any{"intents": []any{}}
	select {
	case <-f.done:
	default:
		page["intents"] = []any{map[string]any{"intentId": "b-1", "status": "pending", "attempts": []any{}}}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}

// TestAwaitDrainWaitsForTheServiceToStartAndDrain starts the service only
// after loadgen began waiting (its requests fail until then), drains it
// later, and checks that --await-drain reports the time to the drain, no
// sooner, and polled at its pace rather than in a busy loop.
func TestAwaitDrainWaitsForTheServiceToStartAndDrain(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens yet: the service is still starting

	f := &fakePending{done: make(chan struct{})}
	go func() {
		time.Sleep(200 * time.Millisecond)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: f}}
		srv.Start()
		t.Cleanup(srv.Close)
		time.Sleep(300 * time.Millisecond)
		close(f.done)
	}()

	var out, errOut bytes.Buffer
	code := realMain(context.Background(), []string{"--url", "http://" + addr, "--await-drain", "--json", "--wait-timeout", "10s"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, errOut.String())
	}
	var rep drainReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report %q: %v", out.String(), err)
	}
	if rep.DrainedSeconds < 0.5 || rep.DrainedSeconds > 5 {
		t.Errorf("drainedSeconds = %v, want the ~0.5 s until the fake drained", rep.DrainedSeconds)
	}
	// About 300 ms of answers at one read per 20 ms: 15, and far from a busy loop.
	if n := f.reads.Load(); n < 5 || n > 40 {
		t.Errorf("%d reads while the service ran, want one per %v", n, drainPoll)
	}
}

// TestAwaitDrainGivesUpAtItsTimeout checks that a backlog that never drains
// fails the run (exit 1) and says so, at --wait-timeout.
func TestAwaitDrainGivesUpAtItsTimeout(t *testing.T) {
	f := &fakePending{done: make(chan struct{})}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	var out, errOut bytes.Buffer
	start := time.Now()
	code := realMain(context.Background(), []string{"--url", srv.URL, "--await-drain", "--wait-timeout", "300ms"}, &out, &errOut)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("gave up after %v, want about the 300ms timeout", took)
	}
	if code != 1 || !strings.Contains(errOut.String(), "still pending after 300ms") {
		t.Errorf("exit %d, stderr %q: want 1 and the intents still pending", code, errOut.String())
	}
}

// TestAwaitDrainStopsAtARefusal: a 4xx (a wrong API key, say) will not
// clear by asking again, so the wait ends at once and says why.
func TestAwaitDrainStopsAtARefusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"title":"missing or unknown API key"}`))
	}))
	t.Cleanup(srv.Close)
	var out, errOut bytes.Buffer
	start := time.Now()
	code := realMain(context.Background(), []string{"--url", srv.URL, "--await-drain", "--wait-timeout", "30s"}, &out, &errOut)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a refusal took %v to end the wait, want at once", took)
	}
	if code != 1 || !strings.Contains(errOut.String(), "HTTP 401") {
		t.Errorf("exit %d, stderr %q: want 1 and the refusal", code, errOut.String())
	}
}

// TestAwaitDrainEndsAtItsTimeoutWhenTheServiceHangs: a service that takes
// the request and never answers does not hold the wait past --wait-timeout
// (the lean doer's own timeout is 30 s).
func TestAwaitDrainEndsAtItsTimeoutWhenTheServiceHangs(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(hang); srv.Close() })
	var out, errOut bytes.Buffer
	start := time.Now()
	code := realMain(context.Background(), []string{"--url", srv.URL, "--await-drain", "--wait-timeout", "300ms"}, &out, &errOut)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the wait ended after %v, want about its 300ms timeout", took)
	}
	if code != 1 || !strings.Contains(errOut.String(), "did not answer within 300ms") {
		t.Errorf("exit %d, stderr %q: want 1 and no answer", code, errOut.String())
	}
}

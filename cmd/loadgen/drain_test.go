package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakePending serves GET /v1/intents?status=pending&limit=1: one pending
// intent for its first pendingFor reads (for good when pendingFor is 0),
// then none. It counts the reads and notes when it first answered none.
type fakePending struct {
	pendingFor int64
	reads      atomic.Int64

	mu        sync.Mutex
	drainedAt time.Time
}

func (f *fakePending) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.reads.Add(1)
	q := r.URL.Query()
	if r.URL.Path != "/v1/intents" || q.Get("status") != "pending" || q.Get("limit") != "1" {
		http.Error(w, "unexpected request "+r.URL.String(), http.StatusBadRequest)
		return
	}
	page := map[string]any{"intents": []any{}}
	if f.pendingFor == 0 || n <= f.pendingFor {
		page["intents"] = []any{map[string]any{"intentId": "b-1", "status": "pending", "attempts": []any{}}}
	} else {
		f.mu.Lock()
		if f.drainedAt.IsZero() {
			f.drainedAt = time.Now()
		}
		f.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}

// startingListener is a service that is still starting: it closes the
// first refuse connections it accepts, so the requests on them fail, and
// notes when it accepted the first.
type startingListener struct {
	net.Listener
	refuse int

	mu    sync.Mutex
	first time.Time
}

// Accept is called by the server's one accepting goroutine.
func (l *startingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.first.IsZero() {
			l.first = time.Now()
		}
		refuse := l.refuse > 0
		if refuse {
			l.refuse--
		}
		l.mu.Unlock()
		if !refuse {
			return c, nil
		}
		_ = c.Close()
	}
}

// TestAwaitDrainWaitsForTheServiceToStartAndDrain: the service fails
// loadgen's first requests (it is still starting), then answers that an
// intent is pending a few times, then that none is. --await-drain must
// retry through the failures, end at the first answer with nothing pending
// and no sooner, report the time from its start to that answer, and ask at
// its pace rather than in a busy loop. No step waits on the clock: the
// service's answers are counted, not timed.
func TestAwaitDrainWaitsForTheServiceToStartAndDrain(t *testing.T) {
	const refused, pending = 3, 5
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	starting := &startingListener{Listener: ln, refuse: refused}
	f := &fakePending{pendingFor: pending}
	srv := &httptest.Server{Listener: starting, Config: &http.Server{Handler: f}}
	srv.Start()
	t.Cleanup(srv.Close)

	var out, errOut bytes.Buffer
	start := time.Now()
	code := realMain(context.Background(), []string{"--url", srv.URL, "--await-drain", "--json", "--wait-timeout", "10s"}, &out, &errOut)
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, errOut.String())
	}
	var rep drainReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report %q: %v", out.String(), err)
	}
	starting.mu.Lock()
	first := starting.first
	starting.mu.Unlock()
	f.mu.Lock()
	drainedAt := f.drainedAt
	f.mu.Unlock()
	// The fake served nothing before the failing connections were tried.
	if n := f.reads.Load(); n != pending+1 {
		t.Fatalf("%d reads, want %d: every one until the service drained, and the first that found nothing pending", n, pending+1)
	}
	// loadgen started before the first connection and read its report's
	// end after the answer that drained: the figure covers that span, and
	// no more than the whole run.
	if d := rep.DrainedSeconds; d < drainedAt.Sub(first).Seconds() || d > took.Seconds() {
		t.Errorf("drainedSeconds = %v, want between the %v from the first connection to the drain and the %v of the run",
			d, drainedAt.Sub(first).Seconds(), took.Seconds())
	}
	// Each request after the first waits for the next of drainPoll's ticks,
	// which never come early: the last of them cannot precede its tick.
	requests := refused + pending + 1
	if least := time.Duration(requests-1) * drainPoll; drainedAt.Sub(start) < least {
		t.Errorf("%d requests within %v, want one per %v (at least %v): a busy loop", requests, drainedAt.Sub(start), drainPoll, least)
	}
}

// TestAwaitDrainGivesUpAtItsTimeout checks that a backlog that never drains
// fails the run (exit 1) and says so, at --wait-timeout.
func TestAwaitDrainGivesUpAtItsTimeout(t *testing.T) {
	f := &fakePending{}
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

// TestAwaitDrainAsksAtItsDrainPoll: --drain-poll sets the pace of the
// asks, so a benchmark that reads the drain's end from the store can ask
// rarely. With three answers of "pending" before the drain, the fourth
// ask cannot come before three of its ticks have passed.
func TestAwaitDrainAsksAtItsDrainPoll(t *testing.T) {
	const pending, poll = 3, 100 * time.Millisecond
	f := &fakePending{pendingFor: pending}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	var out, errOut bytes.Buffer
	start := time.Now()
	code := realMain(context.Background(), []string{"--url", srv.URL, "--await-drain", "--drain-poll", poll.String(), "--wait-timeout", "10s"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, errOut.String())
	}
	f.mu.Lock()
	drainedAt := f.drainedAt
	f.mu.Unlock()
	if n := f.reads.Load(); n != pending+1 {
		t.Fatalf("%d reads, want %d", n, pending+1)
	}
	if least := pending * poll; drainedAt.Sub(start) < least {
		t.Errorf("drained %v after the start, want at least %v: the asks did not keep to --drain-poll", drainedAt.Sub(start), least)
	}
}

// TestDrainPollMustBePositive: a pace of zero would ask in a busy loop.
func TestDrainPollMustBePositive(t *testing.T) {
	var out bytes.Buffer
	_, err := parseFlags([]string{"--await-drain", "--drain-poll", "0s"}, &out)
	if err == nil || !strings.Contains(err.Error(), "--drain-poll") {
		t.Fatalf("--drain-poll 0s: %v, want an error naming the flag", err)
	}
}

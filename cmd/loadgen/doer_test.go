package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

// echoServer answers every request with its method, path and body, and
// counts the connections it accepted.
func echoServer(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(handler)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func echo(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	io.WriteString(w, r.Method+" "+r.URL.RequestURI()+" "+string(body))
}

func send(t *testing.T, d *leanDoer, url, body string) string {
	t.Helper()
	return roundTrip(t, d, http.MethodPost, url, bytes.NewReader([]byte(body)))
}

// roundTrip sends a request through d and returns its answer's body; a nil
// body sends none, as loadgen's reads do.
func roundTrip(t *testing.T, d *leanDoer, method, url string, body io.Reader) string {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := d.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

// TestLeanDoerKeepsConnectionsAlive: sequential requests share one
// connection, and every answer belongs to its request.
func TestLeanDoerKeepsConnectionsAlive(t *testing.T) {
	srv, conns := echoServer(t, echo)
	d, err := newLeanDoer(srv.URL, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range 50 {
		body := strings.Repeat("x", i)
		if got, want := send(t, d, srv.URL+"/v1/intents?i=1", body), "POST /v1/intents?i=1 "+body; got != want {
			t.Fatalf("request %d answered %q, want %q", i, got, want)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("50 sequential requests opened %d connections, want 1", n)
	}
}

// TestLeanDoerRetriesAConnectionTheServerClosed: the service may close an
// idle keep-alive connection; the next request goes out again on a new
// one, whether it has a body to send again (a POST) or none (loadgen's
// reads of the results).
func TestLeanDoerRetriesAConnectionTheServerClosed(t *testing.T) {
	for _, c := range []struct {
		method string
		body   io.Reader
		want   string
	}{
		{http.MethodPost, strings.NewReader("2"), "POST /b 2"},
		{http.MethodGet, nil, "GET /b "},
	} {
		t.Run(c.method, func(t *testing.T) {
			srv, conns := echoServer(t, echo)
			d, err := newLeanDoer(srv.URL, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			send(t, d, srv.URL+"/a", "1")
			srv.CloseClientConnections()
			if got := roundTrip(t, d, c.method, srv.URL+"/b", c.body); got != c.want {
				t.Fatalf("after the server closed the connection: %q, want %q", got, c.want)
			}
			if n := conns.Load(); n != 2 {
				t.Fatalf("%d connections, want 2", n)
			}
		})
	}
}

// TestLeanDoerReportsATimeoutAsOne: a request on a reused connection that
// outlives its context's deadline fails as a timeout and is not sent again
// on a new connection, which could only fail at dialling and hide why.
func TestLeanDoerReportsATimeoutAsOne(t *testing.T) {
	release := make(chan struct{})
	srv, conns := echoServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-release
		}
		echo(w, r)
	})
	defer close(release)
	d, err := newLeanDoer(srv.URL, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	send(t, d, srv.URL+"/a", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/slow", nil)
	resp, err := d.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("a request held past its deadline succeeded")
	}
	var op *net.OpError
	if !errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &op) && op.Op == "dial") {
		t.Fatalf("a request held past its deadline failed with %v, want the read's timeout", err)
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections, want 1 (a timed-out request is not sent again)", n)
	}
}

// TestLeanDoerDropsConnectionsTheServerEnds: an answer with Connection:
// close, or one whose body the caller did not read, leaves no connection
// behind that a later request could trip over.
func TestLeanDoerDropsConnectionsTheServerEnds(t *testing.T) {
	srv, conns := echoServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		echo(w, r)
	})
	d, err := newLeanDoer(srv.URL, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	send(t, d, srv.URL+"/close", "1")
	if got := send(t, d, srv.URL+"/next", "2"); got != "POST /next 2" {
		t.Fatalf("after Connection: close: %q", got)
	}
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2 (the closed one is not reused)", n)
	}
	// An unread body is drained on Close, and the connection stays usable.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/unread", nil)
	resp, err := d.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := send(t, d, srv.URL+"/after", "3"); got != "POST /after 3" {
		t.Fatalf("after an unread body: %q", got)
	}
}

func TestLeanDoerRefusesWhatItCannotSpeak(t *testing.T) {
	for _, u := range []string{"https://example.com", "unix:///tmp/x", "http://"} {
		if _, err := newLeanDoer(u, time.Second); err == nil {
			t.Errorf("newLeanDoer(%q) accepted it", u)
		}
	}
}

// TestHTTPSGoesThroughNetHTTP: the lean doer is plain HTTP only; an
// https:// service gets net/http's client.
func TestHTTPSGoesThroughNetHTTP(t *testing.T) {
	for url, wantLean := range map[string]bool{"http://127.0.0.1:8000": true, "https://sm.example:8443": false} {
		c, closeIdle, err := newClient(config{URL: url, Concurrency: 4})
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		closeIdle()
		_, lean := c.ClientInterface.(*client.Client).Client.(*leanDoer)
		if lean != wantLean {
			t.Errorf("%s: lean doer %v, want %v", url, lean, wantLean)
		}
	}
}

package gateway_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gateway"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// countingServer is a gateway that accepts everything and counts the
// connections the client opens to it; answer may adjust each answer.
func countingServer(t *testing.T, answer func(http.ResponseWriter, *http.Request)) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var opened atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if answer != nil {
			answer(w, r)
		}
		_, _ = io.WriteString(w, `{"status":"accepted"}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &opened
}

func mustAccept(t *testing.T, c *gateway.Client, url, ref string) {
	t.Helper()
	o, err := c.Submit(t.Context(), params(core.GatewaySMS, url, ref, `{}`))
	if err != nil || o.Status != core.OutcomeAccepted {
		t.Fatalf("call %s: %+v, %v", ref, o, err)
	}
}

func TestConnectionsAreKeptAlive(t *testing.T) {
	srv, opened := countingServer(t, nil)
	c := newClient(t, core.GatewaySMS, gateway.Config{})
	for i := range 5 {
		mustAccept(t, c, srv.URL, "kept-"+string(rune('a'+i)))
	}
	if n := opened.Load(); n != 1 {
		t.Fatalf("5 calls one after another opened %d connections, want 1", n)
	}
}

// TestIdleConnectionTheGatewayClosedIsNotReused: a frontend closes idle
// connections on its own timeout. The next call must not be written into
// the closed one (it would fail, and an attempt would be in doubt for
// nothing): it goes out on a new connection.
func TestIdleConnectionTheGatewayClosedIsNotReused(t *testing.T) {
	srv, opened := countingServer(t, nil)
	c := newClient(t, core.GatewaySMS, gateway.Config{})
	mustAccept(t, c, srv.URL, "before")
	idle := gateway.IdleConns(c, srv.Listener.Addr().String())
	if len(idle) != 1 {
		t.Fatalf("%d idle connections after one call, want 1", len(idle))
	}
	srv.CloseClientConnections()
	awaitClosedByPeer(t, idle[0])
	mustAccept(t, c, srv.URL, "after")
	if n := opened.Load(); n != 2 {
		t.Fatalf("opened %d connections, want 2: the closed one, then a new one", n)
	}
}

// awaitClosedByPeer blocks until the gateway's close of nc, an idle
// connection of the client's, has reached the client's side, where the pool
// can see it. A read then ends with the end of stream; it takes nothing, as
// an idle connection holds no data. The read deadline only bounds a close
// that never arrives.
func awaitClosedByPeer(t *testing.T, nc net.Conn) {
	t.Helper()
	if err := nc.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, err := nc.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("reading the idle connection the gateway closed: %d bytes, %v; want the end of stream", n, err)
	}
	if err := nc.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
}

func TestAnswerThatClosesItsConnectionIsNotReused(t *testing.T) {
	srv, opened := countingServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Connection", "close")
	})
	c := newClient(t, core.GatewaySMS, gateway.Config{})
	for i := range 3 {
		mustAccept(t, c, srv.URL, "close-"+string(rune('a'+i)))
	}
	if n := opened.Load(); n != 3 {
		t.Fatalf("3 answers saying Connection: close, %d connections, want 3", n)
	}
}

// TestInterimAndChunkedAnswers plays what a gateway behind a proxy may send:
// an interim 100 before the answer, and the answer chunked. The client
// reads past the first and through the second, and keeps the connection.
func TestInterimAndChunkedAnswers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	var opened atomic.Int64
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			opened.Add(1)
			go func() {
				defer nc.Close()
				br := bufio.NewReader(nc)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					_, err = io.WriteString(nc, "HTTP/1.1 100 Continue\r\n\r\n"+
						"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"+
						"a\r\n{\"status\":\r\nb\r\n\"accepted\"}\r\n0\r\n\r\n")
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	c := newClient(t, core.GatewaySMS, gateway.Config{})
	url := "http://" + ln.Addr().String()
	mustAccept(t, c, url, "chunked-1")
	mustAccept(t, c, url, "chunked-2")
	if n := opened.Load(); n != 1 {
		t.Fatalf("opened %d connections, want 1: a chunked answer read to its end leaves the connection usable", n)
	}
}

// TestCallCutShortLeavesNoConnectionBehind: a call whose context ends while
// the gateway hangs returns at once, and its connection, which may still
// receive that late answer, carries no other call.
func TestCallCutShortLeavesNoConnectionBehind(t *testing.T) {
	var calls atomic.Int64
	srv, opened := countingServer(t, func(_ http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			<-r.Context().Done() // hangs until the client goes
		}
	})
	c := newClient(t, core.GatewaySMS, gateway.Config{MaxConnsPerHost: 1})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Submit(ctx, params(core.GatewaySMS, srv.URL, "cut", `{}`))
	wantError(t, err, gateway.KindTimeout, gateway.ErrTimeout, "gateway call timed out: the caller's deadline passed")
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the call returned %s after its deadline", d)
	}
	// With one connection allowed, a slot or connection left behind would
	// make this call wait or fail.
	mustAccept(t, c, srv.URL, "next")
	if n := opened.Load(); n != 2 {
		t.Fatalf("opened %d connections, want 2: the cut one is not reused", n)
	}
}

func TestHTTPSGoesThroughTheTransport(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"status":"accepted"}`)
	}))
	defer srv.Close()
	c := newClient(t, core.GatewaySMS, gateway.Config{})
	// The test server's certificate is its own: the Transport's TLS
	// handshake, which only https calls make, refuses it.
	_, err := c.Submit(t.Context(), params(core.GatewaySMS, srv.URL, "tls", `{}`))
	wantError(t, err, gateway.KindTransport, gateway.ErrTransport, "gateway call failed: Post *")
	if !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("error %q, want the TLS handshake's refusal of the certificate", err)
	}
}

// TestOversizedAnswerIsNotReadToItsEnd: a gateway that announces a huge
// answer and trickles it must cost the call no more than the bounded read;
// the rest is not drained, the connection is closed.
func TestOversizedAnswerIsNotReadToItsEnd(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000000")
		_, _ = io.WriteString(w, `{"status":"accepted","padding":"`+strings.Repeat("x", 100<<10))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes
	}))
	defer srv.Close()
	c := newClient(t, core.GatewaySMS, gateway.Config{Timeout: 30 * time.Second})
	start := time.Now()
	_, err := c.Submit(t.Context(), params(core.GatewaySMS, srv.URL, "huge", `{}`))
	wantError(t, err, gateway.KindTooLarge, gateway.ErrInvalidAnswer, "gateway answer exceeds 65536 bytes")
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the call took %s: it waited for the rest of the answer", d)
	}
}

// TestCallThatNeverHadAConnectionIsNotInDoubt: a call that timed out while
// waiting for a connection (all of them busy) never reached the gateway, so
// its error does not claim the answer was lost.
func TestCallThatNeverHadAConnectionIsNotInDoubt(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 2)
	srv, _ := countingServer(t, func(http.ResponseWriter, *http.Request) {
		arrived <- struct{}{}
		<-release
	})
	defer close(release)
	c := newClient(t, core.GatewaySMS, gateway.Config{MaxConnsPerHost: 1})
	held := make(chan error, 1)
	go func() {
		_, err := c.Submit(t.Context(), params(core.GatewaySMS, srv.URL, "holds", `{}`))
		held <- err
	}()
	// Once the gateway holds the first call, that call has the one connection.
	select {
	case <-arrived:
	case err := <-held:
		t.Fatalf("the first call ended before the gateway held it: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Submit(ctx, params(core.GatewaySMS, srv.URL, "waits", `{}`))
	wantError(t, err, gateway.KindTimeout, gateway.ErrTimeout, "gateway call timed out: the caller's deadline passed")
	if errors.Is(err, ports.ErrAnswerLost) {
		t.Fatalf("error %q claims a lost answer for a call that never had a connection", err)
	}
	release <- struct{}{}
	if err := <-held; err != nil {
		t.Fatalf("the call holding the connection: %v", err)
	}
}

// TestIdleConnectionsCloseAfterTheirTimeout: connections left idle are closed
// once IdleConnTimeout passed, the oldest included, though no call comes
// to take them.
func TestIdleConnectionsCloseAfterTheirTimeout(t *testing.T) {
	// Each call is answered once all three reached the gateway: they
	// overlap, so each has a connection of its own.
	var arrived atomic.Int64
	all := make(chan struct{})
	closed := make(chan struct{}, 3)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrived.Add(1) == 3 {
			close(all)
		}
		select {
		case <-all:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, `{"status":"accepted"}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			select {
			case closed <- struct{}{}:
			default: // never blocks the server; three closes are all the test waits for
			}
		}
	}
	srv.Start()
	defer srv.Close()
	c := newClient(t, core.GatewaySMS, gateway.Config{IdleConnTimeout: 100 * time.Millisecond})
	errs := make(chan error, 3)
	for i := range 3 {
		go func() {
			_, err := c.Submit(t.Context(), params(core.GatewaySMS, srv.URL, "idle-"+string(rune('a'+i)), `{}`))
			errs <- err
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// The bound only ends a wait for closes that never come.
	bound := time.After(10 * time.Second)
	for n := range 3 {
		select {
		case <-closed:
		case <-bound:
			t.Fatalf("%d of 3 idle connections closed after their timeout", n)
		}
	}
}

// TestProxyStatusesForALostAnswer: behind HAProxy, a gateway that broke off
// or timed out after taking the call comes back as 502 or 504, which may
// hide an acceptance; a 503 (no gateway to send it to) or the gateway's own
// 500 does not.
func TestProxyStatusesForALostAnswer(t *testing.T) {
	for status, lost := range map[int]bool{502: true, 504: true, 503: false, 500: false} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
		c := newClient(t, core.GatewaySMS, gateway.Config{})
		_, err := c.Submit(t.Context(), params(core.GatewaySMS, srv.URL, "status", `{}`))
		srv.Close()
		if gateway.KindOf(err) != gateway.KindHTTPStatus || errors.Is(err, ports.ErrAnswerLost) != lost {
			t.Errorf("HTTP %d: error %q, kind %q, wraps ErrAnswerLost %v, want %v", status, err, gateway.KindOf(err), !lost, lost)
		}
	}
}

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"
)

// leanDoer is the SDK's HttpRequestDoer for the generator: plain HTTP/1.1
// over keep-alive connections it owns, one request at a time on each, with
// net/http's own request writer and response parser. net/http's Transport
// hands every request to two goroutines per connection and back; on a
// shared 2-core host that bookkeeping costs the generator about as much as
// its requests, CPU the service under test then lacks. Only http:// URLs;
// no proxies, no compression, no HTTP/2 — what a load generator on loopback
// needs, nothing more (run.go sends https:// through net/http instead).
type leanDoer struct {
	addr    string
	timeout time.Duration
	dialer  net.Dialer

	mu   sync.Mutex
	idle []*leanConn
}

// leanConn is one keep-alive connection with its buffers.
type leanConn struct {
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
}

// newLeanDoer returns a doer for the service at base (an http:// URL);
// timeout bounds each request, from writing it to reading the whole answer.
func newLeanDoer(base string, timeout time.Duration) (*leanDoer, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("--url %s: the lean doer speaks plain http:// only", base)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return &leanDoer{addr: addr, timeout: timeout, dialer: net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}}, nil
}

// Do sends req and returns its response; the caller must close the body,
// which hands the connection back for the next request. A request that
// fails on a reused connection before any answer (the service closed it
// while idle) is sent once more on a new one, whether it has a body to send
// again or none: after a drain longer than the service's idle timeout,
// every idle connection is closed, and a read of the results went out on
// one and failed with "broken pipe". A request that timed out is not: a new
// connection would fail at dialling ("dial tcp: i/o timeout"), hiding that
// the request timed out.
func (d *leanDoer) Do(req *http.Request) (*http.Response, error) {
	lc, reused, err := d.get(req.Context())
	if err != nil {
		return nil, err
	}
	resp, err := d.roundTrip(lc, req)
	bodiless := req.Body == nil || req.Body == http.NoBody
	timedOut := errors.Is(err, os.ErrDeadlineExceeded)
	if err != nil && reused && !timedOut && (bodiless || req.GetBody != nil) {
		retry := req.Clone(req.Context())
		if !bodiless {
			body, berr := req.GetBody()
			if berr != nil {
				return nil, err
			}
			retry.Body = body
		}
		if lc, err = d.dial(req.Context()); err != nil {
			return nil, err
		}
		return d.roundTrip(lc, retry)
	}
	return resp, err
}

func (d *leanDoer) roundTrip(lc *leanConn, req *http.Request) (*http.Response, error) {
	// The connection's deadline is the request's: the doer's timeout, or
	// the context's deadline when that comes first (a cancellation without
	// a deadline is not watched: loadgen's contexts end by deadlines).
	var deadline time.Time
	if d.timeout > 0 {
		deadline = time.Now().Add(d.timeout)
	}
	if dl, ok := req.Context().Deadline(); ok && (deadline.IsZero() || dl.Before(deadline)) {
		deadline = dl
	}
	_ = lc.conn.SetDeadline(deadline)
	if err := req.Write(lc.w); err != nil {
		lc.conn.Close()
		return nil, err
	}
	if err := lc.w.Flush(); err != nil {
		lc.conn.Close()
		return nil, err
	}
	resp, err := http.ReadResponse(lc.r, req)
	if err != nil {
		lc.conn.Close()
		return nil, err
	}
	resp.Body = &leanBody{body: resp.Body, d: d, lc: lc, keep: !resp.Close}
	return resp, nil
}

// get takes an idle connection or dials a new one.
func (d *leanDoer) get(ctx context.Context) (*leanConn, bool, error) {
	d.mu.Lock()
	if n := len(d.idle); n > 0 {
		lc := d.idle[n-1]
		d.idle = d.idle[:n-1]
		d.mu.Unlock()
		return lc, true, nil
	}
	d.mu.Unlock()
	lc, err := d.dial(ctx)
	return lc, false, err
}

func (d *leanDoer) dial(ctx context.Context) (*leanConn, error) {
	c, err := d.dialer.DialContext(ctx, "tcp", d.addr)
	if err != nil {
		return nil, err
	}
	return &leanConn{conn: c, r: bufio.NewReaderSize(c, 8<<10), w: bufio.NewWriterSize(c, 8<<10)}, nil
}

// put returns a connection whose last answer was read in full.
func (d *leanDoer) put(lc *leanConn) {
	d.mu.Lock()
	d.idle = append(d.idle, lc)
	d.mu.Unlock()
}

// Close closes the idle connections.
func (d *leanDoer) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, lc := range d.idle {
		lc.conn.Close()
	}
	d.idle = nil
}

// leanBody hands its connection back once the answer was read in full.
type leanBody struct {
	body io.ReadCloser
	d    *leanDoer
	lc   *leanConn
	keep bool
	done bool
}

func (b *leanBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		b.keep = false
	}
	return n, err
}

func (b *leanBody) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	if _, err := io.Copy(io.Discard, b.body); err != nil {
		b.keep = false
	}
	err := b.body.Close()
	if b.keep && err == nil {
		b.d.put(b.lc)
	} else {
		b.lc.conn.Close()
	}
	return err
}

package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// conns is the Client's own keep-alive pool for plain-http gateway URLs
// (gateways sit behind HAProxy frontends): one exchange at a time per
// connection, made on the calling goroutine with net/http's request writer
// (Request.Write) and response parser (ReadResponse). net/http's Transport
// runs two goroutines per connection and hands every exchange to them and
// back, five goroutine wake-ups per call; at thousands of calls a second on
// a small host that cost the executor 5-12 % of its CPU per attempt
// (docs/gateway-protocol.md). https URLs go through the Transport.
//
// It keeps the Transport's rules: at most MaxConnsPerHost connections per
// host (a call beyond waits for one, within its context), at most
// MaxIdleConnsPerHost idle ones, none reused after IdleConnTimeout or once
// the gateway closed it, answer headers bounded by MaxAnswerHeaderBytes, and
// a call's context ends its exchange at once.
type conns struct {
	cfg    Config
	dialer net.Dialer

	mu     sync.Mutex
	hosts  map[string]*hostConns
	closed bool
}

// hostConns is one host's share of the pool. A call holds one of its slots
// from taking a connection until the answer's body is closed; a connection
// is dialed only when no idle one is left, so open connections never
// outnumber the slots.
type hostConns struct {
	slots chan struct{}
	idle  []*conn // oldest first, guarded by conns.mu
	// expiry closes the connections idle for IdleConnTimeout; it is armed
	// while any is idle. Calls take the newest idle connection, so under
	// load the oldest would otherwise stay open (and, once the gateway
	// closed them, half-closed) for good.
	expiry *time.Timer
}

// conn is one connection with its buffers. Reads go through it so that the
// answer's headers can be bounded as the Transport bounds them.
type conn struct {
	nc        net.Conn
	br        *bufio.Reader
	bw        *bufio.Writer
	limit     int64 // bytes the reader may still take (headers), or math.MaxInt64
	idleSince time.Time
}

func newConns(cfg Config) *conns {
	return &conns{
		cfg:    cfg,
		dialer: net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: 30 * time.Second},
		hosts:  make(map[string]*hostConns),
	}
}

// notConnected is the error of a call that ended before it had a
// connection (waiting for one, or dialing): the gateway cannot have
// received it.
type notConnected struct{ err error }

func (e notConnected) Error() string { return e.err.Error() }
func (e notConnected) Unwrap() error { return e.err }

// errHeadersTooLarge ends an answer whose headers pass MaxAnswerHeaderBytes.
type errHeadersTooLarge int64

func (e errHeadersTooLarge) Error() string {
	return fmt.Sprintf("gateway answer headers exceeded %d bytes; aborted", int64(e))
}

func (c *conn) Read(p []byte) (int, error) {
	if c.limit <= 0 {
		return 0, errHeadersTooLarge(0)
	}
	if int64(len(p)) > c.limit {
		p = p[:c.limit]
	}
	n, err := c.nc.Read(p)
	if c.limit != math.MaxInt64 {
		c.limit -= int64(n)
	}
	return n, err
}

// roundTrip makes one exchange of req (an http:// request) and returns its
// answer; closing the answer's body gives the connection back.
func (p *conns) roundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		return nil, notConnected{err}
	}
	addr := hostPort(req.URL.Host)
	h := p.host(addr)
	select {
	case h.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, notConnected{ctx.Err()}
	}
	c, err := p.get(ctx, h, addr)
	if err != nil {
		<-h.slots
		return nil, notConnected{err}
	}
	stop := func() bool { return true }
	if ctx.Done() != nil {
		// A done context ends any read or write under way at once; the
		// context's state, not the I/O error, then says why.
		stop = context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(time.Unix(1, 0)) })
	}
	resp, err := c.exchange(req, p.cfg.MaxAnswerHeaderBytes)
	if err != nil {
		stop()
		_ = c.nc.Close()
		<-h.slots
		return nil, err
	}
	resp.Body = &answerBody{rc: resp.Body, p: p, h: h, c: c, stop: stop, keep: resp.StatusCode >= 200 && !resp.Close && !req.Close}
	return resp, nil
}

// exchange writes req and reads its answer, skipping interim (1xx) answers
// as the Transport does. When the write fails, an answer the gateway sent
// before closing (a refusal of the request) is still read.
func (c *conn) exchange(req *http.Request, headerLimit int64) (*http.Response, error) {
	werr := req.Write(c.bw)
	if werr == nil {
		werr = c.bw.Flush()
	}
	c.limit = headerLimit
	var resp *http.Response
	var err error
	for {
		resp, err = http.ReadResponse(c.br, req)
		if err != nil || resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
	}
	c.limit = math.MaxInt64
	switch {
	case err == nil && werr != nil:
		resp.Close = true // the connection is half gone
		return resp, nil
	case werr != nil:
		return nil, werr
	case errors.Is(err, errHeadersTooLarge(0)):
		return nil, errHeadersTooLarge(headerLimit)
	}
	return resp, err
}

// host returns the pool of one host:port.
func (p *conns) host(addr string) *hostConns {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.hosts[addr]
	if h == nil {
		h = &hostConns{slots: make(chan struct{}, p.cfg.MaxConnsPerHost)}
		p.hosts[addr] = h
	}
	return h
}

// get takes the newest idle connection that is still usable, or dials.
func (p *conns) get(ctx context.Context, h *hostConns, addr string) (*conn, error) {
	for {
		p.mu.Lock()
		n := len(h.idle)
		if n == 0 {
			p.mu.Unlock()
			break
		}
		c := h.idle[n-1]
		h.idle[n-1] = nil
		h.idle = h.idle[:n-1]
		p.mu.Unlock()
		if time.Since(c.idleSince) < p.cfg.IdleConnTimeout && c.br.Buffered() == 0 && stillOpen(c.nc) {
			return c, nil
		}
		_ = c.nc.Close()
	}
	nc, err := p.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &conn{nc: nc, limit: math.MaxInt64}
	c.br = bufio.NewReaderSize(c, 4<<10)
	c.bw = bufio.NewWriterSize(nc, 4<<10)
	return c, nil
}

// put gives a connection whose answer was read in full back to the pool.
func (p *conns) put(h *hostConns, c *conn) {
	c.idleSince = time.Now()
	p.mu.Lock()
	if p.closed || len(h.idle) >= p.cfg.MaxIdleConnsPerHost {
		p.mu.Unlock()
		_ = c.nc.Close()
		return
	}
	h.idle = append(h.idle, c)
	expired := p.expiredLocked(h, c.idleSince)
	if h.expiry == nil {
		h.expiry = time.AfterFunc(p.cfg.IdleConnTimeout, func() { p.expire(h) })
	}
	p.mu.Unlock()
	closeAll(expired)
}

// expire closes a host's expired idle connections and arms itself again
// for the oldest one left.
func (p *conns) expire(h *hostConns) {
	p.mu.Lock()
	now := time.Now()
	expired := p.expiredLocked(h, now)
	h.expiry = nil
	if len(h.idle) > 0 && !p.closed {
		h.expiry = time.AfterFunc(h.idle[0].idleSince.Add(p.cfg.IdleConnTimeout).Sub(now), func() { p.expire(h) })
	}
	p.mu.Unlock()
	closeAll(expired)
}

// expiredLocked takes the connections idle for IdleConnTimeout at now off
// the front of the idle list.
func (p *conns) expiredLocked(h *hostConns, now time.Time) []*conn {
	n := 0
	for n < len(h.idle) && now.Sub(h.idle[n].idleSince) >= p.cfg.IdleConnTimeout {
		n++
	}
	if n == 0 {
		return nil
	}
	expired := slices.Clone(h.idle[:n])
	h.idle = slices.Delete(h.idle, 0, n)
	return expired
}

func closeAll(cs []*conn) {
	for _, c := range cs {
		_ = c.nc.Close()
	}
}

// close closes the idle connections, and every connection given back
// afterwards. Calls under way finish normally.
func (p *conns) close() {
	p.mu.Lock()
	p.closed = true
	var idle []*conn
	for _, h := range p.hosts {
		idle = append(idle, h.idle...)
		h.idle = nil
		if h.expiry != nil {
			h.expiry.Stop()
			h.expiry = nil
		}
	}
	p.mu.Unlock()
	closeAll(idle)
}

// answerBody gives its connection back to the pool once the answer was read
// to its end, or closes it.
type answerBody struct {
	rc   io.ReadCloser
	p    *conns
	h    *hostConns
	c    *conn
	stop func() bool
	keep bool // the connection may carry another exchange
	eof  bool
	done bool
}

func (b *answerBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.eof = true
	case err != nil:
		b.keep = false
	}
	return n, err
}

// Close never reads what is left of an answer (net/http's body would read
// it all, however large): an answer not read to its end closes the
// connection instead.
func (b *answerBody) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	// stop reports false once the context ended the exchange: its deadline
	// is set on the connection, which no other exchange may then use.
	if b.stop() && b.keep && b.eof && b.rc.Close() == nil {
		b.p.put(b.h, b.c)
	} else {
		_ = b.c.nc.Close()
	}
	<-b.h.slots
	return nil
}

// hostPort is a URL's host with its port, 80 when the URL names none.
func hostPort(host string) string {
	if _, port, err := net.SplitHostPort(host); err == nil && port != "" {
		return host
	}
	return net.JoinHostPort(stripBrackets(host), "80")
}

func stripBrackets(host string) string {
	if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		return host[1 : len(host)-1]
	}
	return host
}

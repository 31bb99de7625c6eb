package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/submissionmanager/submission-manager/api/gatewayapi"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Client submits attempts to the gateways of one gateway type, at whatever
// gatewayUrl each attempt's contract snapshot names, through one bounded
// connection pool. It is safe for concurrent use.
type Client struct {
	gatewayType core.GatewayType
	read        answerReader
	cfg         Config
	// conns carries the calls to http:// gateway URLs (conns.go), and
	// transport those to https:// ones, without net/http's Client (see
	// send).
	conns     *conns
	transport *http.Transport
	// submitHeaders and lookupHeaders are the headers of every request:
	// each request gets its own map (maps.Clone) of these values, which
	// nothing changes.
	submitHeaders, lookupHeaders http.Header
	// submitURLs maps a gateway URL to its submit URL (submitURL), at most
	// maxSubmitURLs of them, counted by submitURLCount.
	submitURLs     sync.Map
	submitURLCount atomic.Int32
}

var _ ports.Gateway = (*Client)(nil)

// errAttemptTimeout is the cause Submit gives its per-attempt context, to
// tell its own timeout from the caller's deadline.
var errAttemptTimeout = errors.New("attempt timeout")

// New returns the Client of gatewayType; the type decides how answers are
// read. Close it to release its pooled connections.
func New(gatewayType core.GatewayType, cfg Config) (*Client, error) {
	read, ok := answerReaders[gatewayType]
	if !ok {
		return nil, fmt.Errorf("gateway type %q has no client", gatewayType)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	jsonType, ua := []string{"application/json"}, []string{cfg.UserAgent}
	return &Client{
		gatewayType:   gatewayType,
		read:          read,
		cfg:           cfg,
		conns:         newConns(cfg),
		transport:     cfg.transport(),
		submitHeaders: http.Header{"Content-Type": jsonType, "Accept": jsonType, "User-Agent": ua},
		lookupHeaders: http.Header{"Accept": jsonType, "User-Agent": ua},
	}, nil
}

// send makes one exchange through the pool. It does not go through
// net/http's Client, which would follow no redirect here anyway (a redirect
// is an answer other than 200, not a place to resubmit an attempt to) and
// per call copies the request's headers and URL for the redirects it never
// follows. Errors name the method and URL (its password redacted), as the
// Client's do.
func (c *Client) send(req *http.Request) (resp *http.Response, err error) {
	if req.URL.Scheme == "http" {
		resp, err = c.conns.roundTrip(req)
	} else {
		resp, err = c.transport.RoundTrip(req)
	}
	if err != nil {
		op := req.Method[:1] + strings.ToLower(req.Method[1:])
		return nil, &url.Error{Op: op, URL: req.URL.Redacted(), Err: err}
	}
	return resp, nil
}

// release ends an exchange: a short rest of the answer is read so the
// connection can carry the next call; an answer announced longer than the
// bound is cut off with its connection instead, not read on until the call's
// timeout.
func (c *Client) release(resp *http.Response) {
	if resp.ContentLength <= c.cfg.MaxAnswerBytes {
		_, _ = io.CopyN(io.Discard, resp.Body, c.cfg.MaxAnswerBytes)
	}
	_ = resp.Body.Close()
}

// Close releases the pooled idle connections and their goroutines. Calls in
// flight finish normally.
func (c *Client) Close() {
	c.conns.close()
	c.transport.CloseIdleConnections()
}

// Submit posts one attempt and returns the gateway's outcome, or an *Error
// saying why there is none. It makes exactly one call: no retry.
func (c *Client) Submit(ctx context.Context, p ports.SubmitParams) (core.Outcome, error) {
	attemptCtx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, errAttemptTimeout)
	defer cancel()
	req, err := c.newRequest(attemptCtx, p)
	if err != nil {
		return core.Outcome{}, err
	}
	resp, err := c.send(req)
	if err != nil {
		return core.Outcome{}, c.callError(ctx, attemptCtx, err)
	}
	defer c.release(resp)
	if resp.StatusCode != http.StatusOK {
		return core.Outcome{}, c.statusError(resp)
	}
	body, err := readAnswer(resp, c.cfg.MaxAnswerBytes)
	if err != nil {
		return core.Outcome{}, c.callError(ctx, attemptCtx, err)
	}
	if int64(len(body)) > c.cfg.MaxAnswerBytes {
		return core.Outcome{}, c.errorf(KindTooLarge, http.StatusOK, nil, "gateway answer exceeds %d bytes", c.cfg.MaxAnswerBytes)
	}
	return c.read(c, body)
}

// readAnswer reads at most limit+1 bytes of the answer: into a buffer of
// the declared Content-Length when there is one within the limit (the
// usual short answer, without io.ReadAll's growing buffers), else as it
// comes.
func readAnswer(resp *http.Response, limit int64) ([]byte, error) {
	if n := resp.ContentLength; n >= 0 && n <= limit {
		body := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	return io.ReadAll(io.LimitReader(resp.Body, limit+1))
}

// newRequest builds the POST of the attempt to the URL the generated
// request builder gives, the payload spliced in byte for byte.
func (c *Client) newRequest(ctx context.Context, p ports.SubmitParams) (*http.Request, error) {
	if p.GatewayType != c.gatewayType {
		return nil, c.errorf(KindNotSent, 0, nil, "gateway call not sent: a %s client cannot submit to gateway type %q", c.gatewayType, p.GatewayType)
	}
	u, err := c.submitURL(p.GatewayURL)
	if err != nil {
		return nil, c.errorf(KindNotSent, 0, err, "gateway call not sent: %v", err)
	}
	body, err := requestBody(p.Reference, p.Payload)
	if err != nil {
		return nil, c.errorf(KindNotSent, 0, err, "gateway call not sent: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, c.errorf(KindNotSent, 0, err, "gateway call not sent: %v", err)
	}
	req.Header = maps.Clone(c.submitHeaders)
	withTraceParent(req.Header, p.TraceParent)
	return req, nil
}

// maxSubmitURLs bounds the submit URLs a Client keeps: a deployment names a
// handful of gateway URLs; past the bound, URLs are resolved per call.
const maxSubmitURLs = 1024

// submitURL is the submit operation's URL under gatewayURL, resolved by the
// generated request builder (the path is the gateway API's) once per
// gateway URL: every attempt to it would otherwise parse the same URLs.
func (c *Client) submitURL(gatewayURL string) (string, error) {
	if u, ok := c.submitURLs.Load(gatewayURL); ok {
		return u.(string), nil
	}
	base, err := baseURL(gatewayURL)
	if err != nil {
		return "", err
	}
	req, err := gatewayapi.NewSubmitRequestWithBody(base, "application/json", nil)
	if err != nil {
		return "", err
	}
	u := req.URL.String()
	// A place is taken before the store and given back if unused, so
	// concurrent first calls cannot pass the bound.
	if c.submitURLCount.Add(1) > maxSubmitURLs {
		c.submitURLCount.Add(-1)
	} else if _, loaded := c.submitURLs.LoadOrStore(gatewayURL, u); loaded {
		c.submitURLCount.Add(-1)
	}
	return u, nil
}

// callError classifies a failed call: our attempt timeout, the caller's
// deadline or cancellation, or a transport failure.
func (c *Client) callError(parent, attemptCtx context.Context, err error) *Error {
	var e *Error
	switch {
	case context.Cause(attemptCtx) == errAttemptTimeout:
		e = c.errorf(KindTimeout, 0, context.DeadlineExceeded, "gateway call timed out after %s", c.cfg.Timeout)
	case errors.Is(parent.Err(), context.DeadlineExceeded):
		e = c.errorf(KindTimeout, 0, parent.Err(), "gateway call timed out: the caller's deadline passed")
	case parent.Err() != nil:
		e = c.errorf(KindCanceled, 0, parent.Err(), "gateway call canceled before an answer: %v", parent.Err())
	default:
		e = c.errorf(KindTransport, 0, err, "gateway call failed: %v", err)
	}
	var op *net.OpError
	e.unconnected = errors.As(err, new(notConnected)) || (errors.As(err, &op) && op.Op == "dial")
	return e
}

// statusError reports a non-200 answer with the start of its body, which is
// often the only clue to what went wrong upstream. A 429 or 503 whose
// Retry-After header names a wait is also a ports.GatewayBusy: the gateway
// took nothing and asked to be called again later.
func (c *Client) statusError(resp *http.Response) error {
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	text := strings.TrimSpace(strings.ToValidUTF8(string(snippet), "?"))
	var e *Error
	if text == "" {
		e = c.errorf(KindHTTPStatus, resp.StatusCode, nil, "gateway answered HTTP %d", resp.StatusCode)
	} else {
		e = c.errorf(KindHTTPStatus, resp.StatusCode, nil, "gateway answered HTTP %d: %s", resp.StatusCode, text)
	}
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return e
	}
	wait, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now())
	if !ok {
		return e
	}
	e.retryAfter = wait
	e.msg += fmt.Sprintf(" (Retry-After: %s)", wait)
	return busy{e: e}
}

// retryAfter reads a Retry-After header (RFC 9110, section 10.2.3): a
// number of seconds, or an HTTP date, taken relative to now (a date in the
// past asks for no wait). Anything else names no wait.
func retryAfter(header string, now time.Time) (time.Duration, bool) {
	header = strings.TrimSpace(header)
	if header == "" {
		return 0, false
	}
	if secs, err := strconv.ParseUint(header, 10, 32); err == nil {
		return time.Duration(secs) * time.Second, true
	}
	at, err := http.ParseTime(header)
	if err != nil {
		return 0, false
	}
	return max(at.Sub(now), 0), true
}

func (c *Client) errorf(kind Kind, status int, cause error, format string, args ...any) *Error {
	return &Error{Kind: kind, GatewayType: c.gatewayType, StatusCode: status, msg: fmt.Sprintf(format, args...), cause: cause}
}

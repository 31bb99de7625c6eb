package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

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
	transport   *http.Transport
	http        *http.Client
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
	tr := cfg.transport()
	return &Client{
		gatewayType: gatewayType,
		read:        read,
		cfg:         cfg,
		transport:   tr,
		http: &http.Client{
			Transport: tr,
			// A redirect is an answer other than 200, not a place to
			// resubmit the attempt to.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}, nil
}

// Close releases the pooled idle connections and their goroutines. Calls in
// flight finish normally.
func (c *Client) Close() { c.transport.CloseIdleConnections() }

// Submit posts one attempt and returns the gateway's outcome, or an *Error
// saying why there is none. It makes exactly one call: no retry.
func (c *Client) Submit(ctx context.Context, p ports.SubmitParams) (core.Outcome, error) {
	req, err := c.newRequest(p)
	if err != nil {
		return core.Outcome{}, err
	}
	attemptCtx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, errAttemptTimeout)
	defer cancel()
	resp, err := c.http.Do(req.WithContext(attemptCtx))
	if err != nil {
		return core.Outcome{}, c.callError(ctx, attemptCtx, err)
	}
	defer func() {
		// Drain a little so the connection can be reused, then close.
		_, _ = io.CopyN(io.Discard, resp.Body, c.cfg.MaxAnswerBytes)
		_ = resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		return core.Outcome{}, c.statusError(resp)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxAnswerBytes+1))
	if err != nil {
		return core.Outcome{}, c.callError(ctx, attemptCtx, err)
	}
	if int64(len(body)) > c.cfg.MaxAnswerBytes {
		return core.Outcome{}, c.errorf(KindTooLarge, http.StatusOK, nil, "gateway answer exceeds %d bytes", c.cfg.MaxAnswerBytes)
	}
	return c.read(c, body)
}

// newRequest builds the POST of the attempt with the generated request
// builder, the payload spliced in byte for byte.
func (c *Client) newRequest(p ports.SubmitParams) (*http.Request, error) {
	if p.GatewayType != c.gatewayType {
		return nil, c.errorf(KindNotSent, 0, nil, "gateway call not sent: a %s client cannot submit to gateway type %q", c.gatewayType, p.GatewayType)
	}
	base, err := baseURL(p.GatewayURL)
	if err != nil {
		return nil, c.errorf(KindNotSent, 0, err, "gateway call not sent: %v", err)
	}
	body, err := requestBody(p.Reference, p.Payload)
	if err != nil {
		return nil, c.errorf(KindNotSent, 0, err, "gateway call not sent: %v", err)
	}
	req, err := gatewayapi.NewSubmitRequestWithBody(base, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, c.errorf(KindNotSent, 0, err, "gateway call not sent: %v", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	return req, nil
}

// callError classifies a failed call: our attempt timeout, the caller's
// deadline or cancellation, or a transport failure.
func (c *Client) callError(parent, attemptCtx context.Context, err error) *Error {
	switch {
	case context.Cause(attemptCtx) == errAttemptTimeout:
		return c.errorf(KindTimeout, 0, context.DeadlineExceeded, "gateway call timed out after %s", c.cfg.Timeout)
	case errors.Is(parent.Err(), context.DeadlineExceeded):
		return c.errorf(KindTimeout, 0, parent.Err(), "gateway call timed out: the caller's deadline passed")
	case parent.Err() != nil:
		return c.errorf(KindCanceled, 0, parent.Err(), "gateway call canceled before an answer: %v", parent.Err())
	default:
		return c.errorf(KindTransport, 0, err, "gateway call failed: %v", err)
	}
}

// statusError reports a non-200 answer with the start of its body, which is
// often the only clue to what went wrong upstream.
func (c *Client) statusError(resp *http.Response) *Error {
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	text := strings.TrimSpace(strings.ToValidUTF8(string(snippet), "?"))
	if text == "" {
		return c.errorf(KindHTTPStatus, resp.StatusCode, nil, "gateway answered HTTP %d", resp.StatusCode)
	}
	return c.errorf(KindHTTPStatus, resp.StatusCode, nil, "gateway answered HTTP %d: %s", resp.StatusCode, text)
}

func (c *Client) errorf(kind Kind, status int, cause error, format string, args ...any) *Error {
	return &Error{Kind: kind, GatewayType: c.gatewayType, StatusCode: status, msg: fmt.Sprintf(format, args...), cause: cause}
}

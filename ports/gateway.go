package ports

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// SubmitParams is one attempt's submission, routed by the intent's contract
// snapshot: the engine never re-resolves the target at execution time.
type SubmitParams struct {
	GatewayType core.GatewayType
	GatewayURL  string
	// Reference is the intentId, the same on every attempt, so that a gateway
	// can refuse a second submission of one intent with duplicate_reference.
	Reference string
	Payload   json.RawMessage
	// TraceParent, when not empty, is the W3C traceparent the call carries,
	// so that the gateway sees the trace the intent was submitted in: the
	// gateway call span's own (Span.TraceParent), or the intent's as it
	// was kept when tracing is off.
	TraceParent string
}

// Gateway submits one attempt to a gateway and reads its answer. It returns a
// well-formed outcome, built with core.NewOutcome (the engine trusts it as
// given), or an error for anything else (transport failure, timeout, non-200
// status, invalid body); the error text says which. A Gateway never retries
// on its own: the engine owns attempts. An error after which the gateway may
// have acted on the submission wraps ErrAnswerLost.
type Gateway interface {
	Submit(ctx context.Context, p SubmitParams) (core.Outcome, error)
}

// ErrAnswerLost is wrapped by a Gateway's error when the submission may have
// reached the gateway but no answer that could be read came back: the
// connection broke or the call timed out after the request could have gone
// out, a 200 answer was unreadable, or a proxy answered 502 or 504 for a
// gateway that broke off or timed out. The gateway may have accepted it, so
// a leader whose client offers a lookup asks before leaving the attempt in
// doubt. An error it does not wrap says the gateway did not act: the call
// was never made or could not connect, or the gateway (or a proxy with no
// gateway to send it to) answered another status.
var ErrAnswerLost = errors.New("the gateway's answer was lost: it may have acted on the submission")

// GatewayBusy is implemented by a Gateway's error when the gateway answered
// that it did not take the submission and asked to be called again later:
// HTTP 429 Too Many Requests or 503 Service Unavailable with a Retry-After
// header. The gateway did not act on the submission, so the attempt was no
// try; the gateway protection waits as asked before calling it again.
type GatewayBusy interface {
	// RetryAfter is how long the gateway asked callers to wait.
	RetryAfter() time.Duration
}

// RetryAfter returns how long the gateway asked to wait, when err (or an
// error it wraps) says the gateway was busy.
func RetryAfter(err error) (time.Duration, bool) {
	var busy GatewayBusy
	if errors.As(err, &busy) {
		return busy.RetryAfter(), true
	}
	return 0, false
}

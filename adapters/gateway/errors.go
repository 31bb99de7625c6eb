package gateway

import (
	"errors"
	"net/http"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Kind classifies an attempt error, for metrics and for callers that treat
// some failures differently (for example, alerting on ErrNotSent, which means
// a configuration problem rather than a gateway one).
type Kind string

// The kinds of attempt error.
const (
	// KindNotSent: the call was never made (unknown gateway type, invalid
	// gatewayUrl, empty reference, payload that is not JSON).
	KindNotSent Kind = "not_sent"
	// KindTransport: the connection failed or closed without an answer.
	KindTransport Kind = "transport"
	// KindTimeout: the per-attempt timeout or the caller's deadline passed.
	KindTimeout Kind = "timeout"
	// KindCanceled: the caller canceled the call (for example, shutdown).
	KindCanceled Kind = "canceled"
	// KindHTTPStatus: the gateway answered a status other than 200.
	KindHTTPStatus Kind = "http_status"
	// KindNotJSON: the 200 body is not JSON.
	KindNotJSON Kind = "not_json"
	// KindNotObject: the 200 body is JSON but not an object.
	KindNotObject Kind = "not_object"
	// KindTooLarge: the 200 body exceeds Config.MaxAnswerBytes.
	KindTooLarge Kind = "too_large"
	// KindBadField: a field of the answer has the wrong JSON type, such as
	// a numeric reason.
	KindBadField Kind = "bad_field"
	// KindDuplicateField: the answer names one of its fields more than
	// once (keys matched as encoding/json matches them, case-insensitively),
	// so readers disagree on what it said.
	KindDuplicateField Kind = "duplicate_field"
	// KindNoStatus: the answer has no status.
	KindNoStatus Kind = "no_status"
	// KindUnknownStatus: the status is neither accepted nor rejected.
	KindUnknownStatus Kind = "unknown_status"
	// KindNoReason: the answer is rejected without a reason.
	KindNoReason Kind = "no_reason"
)

// Sentinels matched by errors.Is against an *Error, grouping its Kind.
var (
	ErrNotSent       = errors.New("gateway call not sent")
	ErrTransport     = errors.New("gateway transport failure")
	ErrTimeout       = errors.New("gateway call timed out")
	ErrCanceled      = errors.New("gateway call canceled")
	ErrHTTPStatus    = errors.New("gateway answered a non-200 status")
	ErrInvalidAnswer = errors.New("gateway answer is invalid")
)

// Error is an attempt that produced no outcome. Its message is what the
// engine records on the attempt, so it says exactly which failure it was.
type Error struct {
	Kind        Kind
	GatewayType core.GatewayType
	// StatusCode is the HTTP status for KindHTTPStatus and the invalid
	// answer kinds (always 200 for those), and 0 when no answer came.
	StatusCode int
	msg        string
	// cause is the underlying error, if any (a *url.Error, a JSON error,
	// a context error).
	cause error
	// unconnected says the call ended before it had a connection (waiting
	// for one, or dialing), so the gateway cannot have received it.
	unconnected bool
	// retryAfter is the wait a 429 or 503 answer asked for in its
	// Retry-After header; zero when it named none.
	retryAfter time.Duration
}

// busy is an *Error that asked to be called again later (ports.GatewayBusy).
type busy struct{ e *Error }

func (b busy) Error() string { return b.e.Error() }

// RetryAfter implements ports.GatewayBusy.
func (b busy) RetryAfter() time.Duration { return b.e.retryAfter }

// Unwrap makes the busy answer's *Error, its kind and sentinels, reachable.
func (b busy) Unwrap() error { return b.e }

func (e *Error) Error() string { return e.msg }

// Unwrap exposes the cause, so errors.Is(err, context.Canceled) and the
// like keep working.
func (e *Error) Unwrap() error { return e.cause }

// Is matches the sentinel of the error's kind, and ports.ErrAnswerLost when
// the gateway may have acted on the call (see answerLost).
func (e *Error) Is(target error) bool {
	if target == ports.ErrAnswerLost {
		return e.answerLost()
	}
	switch e.Kind {
	case KindNotSent:
		return target == ErrNotSent
	case KindTransport:
		return target == ErrTransport
	case KindTimeout:
		return target == ErrTimeout
	case KindCanceled:
		return target == ErrCanceled
	case KindHTTPStatus:
		return target == ErrHTTPStatus
	default:
		return target == ErrInvalidAnswer
	}
}

// answerLost says whether the gateway may have received the call although no
// readable answer came back: a timeout, cancellation or broken connection
// once the call had its connection, a 200 answer that is not a valid
// outcome, or a proxy's 502 or 504 (HAProxy's words for a gateway that broke
// off or timed out after the call may have reached it). A call never made or
// never connected, and any other status (the gateway's own answer that it
// decided nothing, or a proxy's 503: no gateway to send it to), are not.
func (e *Error) answerLost() bool {
	switch e.Kind {
	case KindNotSent:
		return false
	case KindHTTPStatus:
		return e.StatusCode == http.StatusBadGateway || e.StatusCode == http.StatusGatewayTimeout
	default:
		return !e.unconnected
	}
}

// KindOf returns the kind of an attempt error, or "" when err is not one.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

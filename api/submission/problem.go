package submission

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/submissionmanager/submission-manager/api/client"
)

// TypeBase starts every problem type the service sends; the rest is the
// section of docs/api.md that explains the error.
const TypeBase = "https://github.com/submissionmanager/submission-manager/blob/main/docs/api.md#"

// The documented problem types, one per kind of error (docs/api.md, Errors).
// They never change once published: switch on them, not on titles or details.
const (
	TypeMalformedRequest        = TypeBase + "malformed-request"
	TypeUnauthorized            = TypeBase + "unauthorized"
	TypeForbidden               = TypeBase + "forbidden"
	TypeIntentNotEnded          = TypeBase + "intent-not-ended"
	TypeResubmissionIDTaken     = TypeBase + "resubmission-id-taken"
	TypeDeliveryRisk            = TypeBase + "delivery-risk"
	TypeIntentEnded             = TypeBase + "intent-ended"
	TypeAttemptInFlight         = TypeBase + "attempt-in-flight"
	TypeIntentNotFound          = TypeBase + "intent-not-found"
	TypeTargetNotFound          = TypeBase + "target-not-found"
	TypeRouteNotFound           = TypeBase + "route-not-found"
	TypeMethodNotAllowed        = TypeBase + "method-not-allowed"
	TypeIdempotencyConflict     = TypeBase + "idempotency-conflict"
	TypePayloadTooLarge         = TypeBase + "payload-too-large"
	TypeRequestTimeout          = TypeBase + "request-timeout"
	TypeUnsupportedMediaType    = TypeBase + "unsupported-media-type"
	TypeInvalidField            = TypeBase + "invalid-field"
	TypeUnknownSubmissionTarget = TypeBase + "unknown-submission-target"
	TypeStoreUnavailable        = TypeBase + "store-unavailable"
	TypeNotAvailable            = TypeBase + "not-available"
	TypeServerBusy              = TypeBase + "server-busy"
	TypeAuthenticationThrottled = TypeBase + "authentication-throttled"
	TypeInternalError           = TypeBase + "internal-error"
)

// TypeBlank is the type of an error answer that carried no problem document,
// such as a proxy's error page: RFC 9457's "about:blank", whose meaning is
// the HTTP status alone.
const TypeBlank = "about:blank"

// Problem is an error answer of the API: an RFC 9457 problem document, with
// the members some types add (ConflictingFields, InvalidFields,
// ExistingStatus, IntentId). Every call of Client returns one as its error
// for a 4xx or 5xx answer; find it with errors.As or IsProblem.
type Problem client.Problem

var _ error = (*Problem)(nil)

// Error describes the problem by its status, title and detail.
func (p *Problem) Error() string {
	msg := fmt.Sprintf("%d %s", p.Status, p.Title)
	if p.Detail != nil && *p.Detail != "" {
		msg += ": " + *p.Detail
	}
	return msg
}

// Kind returns the problem type without TypeBase, such as
// "idempotency-conflict": the section of docs/api.md that explains it.
func (p *Problem) Kind() string {
	return strings.TrimPrefix(p.Type, TypeBase)
}

// IsProblem reports whether err is, or wraps, a Problem of type typ.
func IsProblem(err error, typ string) bool {
	var p *Problem
	return errors.As(err, &p) && p.Type == typ
}

// ProblemOf reads an error answer (res with its body, as the generated
// client's responses hold them: HTTPResponse and Body) as a *Problem: its
// problem document when it has one, else a TypeBlank problem with the
// start of the body as its detail. It turns the error answers of API()
// calls into the errors this package's calls return.
func ProblemOf(res *http.Response, body []byte) *Problem {
	status := res.StatusCode
	if mt, _, err := mime.ParseMediaType(res.Header.Get("Content-Type")); err == nil && mt == "application/problem+json" {
		var p Problem
		if json.Unmarshal(body, &p) == nil && p.Type != "" {
			return &p
		}
	}
	p := &Problem{Type: TypeBlank, Title: http.StatusText(status), Status: status}
	if p.Title == "" {
		p.Title = fmt.Sprintf("HTTP %d", status)
	}
	if detail := strings.TrimSpace(string(body)); detail != "" {
		if len(detail) > 200 {
			detail = strings.ToValidUTF8(detail[:200], "") + "…"
		}
		p.Detail = &detail
	}
	return p
}

package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/submissionmanager/submission-manager/adapters/httpapi/internal/apigen"
	"github.com/submissionmanager/submission-manager/core"
)

// ProblemTypeBase prefixes every problem type. Each type resolves to the
// section of docs/api.md that explains the error, and never changes once
// published, so clients may switch on it.
const ProblemTypeBase = "https://github.com/submissionmanager/submission-manager/blob/main/docs/api.md#"

// The stable problem types, one per kind of error.
const (
	TypeMalformedRequest        = ProblemTypeBase + "malformed-request"
	TypeUnauthorized            = ProblemTypeBase + "unauthorized"
	TypeIntentNotFound          = ProblemTypeBase + "intent-not-found"
	TypeTargetNotFound          = ProblemTypeBase + "target-not-found"
	TypeRouteNotFound           = ProblemTypeBase + "route-not-found"
	TypeMethodNotAllowed        = ProblemTypeBase + "method-not-allowed"
	TypeIdempotencyConflict     = ProblemTypeBase + "idempotency-conflict"
	TypePayloadTooLarge         = ProblemTypeBase + "payload-too-large"
	TypeUnsupportedMediaType    = ProblemTypeBase + "unsupported-media-type"
	TypeRequestTimeout          = ProblemTypeBase + "request-timeout"
	TypeServerBusy              = ProblemTypeBase + "server-busy"
	TypeInvalidField            = ProblemTypeBase + "invalid-field"
	TypeUnknownSubmissionTarget = ProblemTypeBase + "unknown-submission-target"
	TypeStoreUnavailable        = ProblemTypeBase + "store-unavailable"
	TypeInternalError           = ProblemTypeBase + "internal-error"
	TypeForbidden               = ProblemTypeBase + "forbidden"
	TypeIntentNotEnded          = ProblemTypeBase + "intent-not-ended"
	TypeResubmissionIDTaken     = ProblemTypeBase + "resubmission-id-taken"
	TypeDeliveryRisk            = ProblemTypeBase + "delivery-risk"
	TypeIntentEnded             = ProblemTypeBase + "intent-ended"
	TypeAttemptInFlight         = ProblemTypeBase + "attempt-in-flight"
	TypeNotAvailable            = ProblemTypeBase + "not-available"
	TypeAuthThrottled           = ProblemTypeBase + "authentication-throttled"
)

// problemContentType is the media type of RFC 9457 problem documents.
const problemContentType = "application/problem+json"

// problem is an error's HTTP answer: the document and the headers that go
// with its status (Allow, WWW-Authenticate, Retry-After).
type problem struct {
	body   apigen.Problem
	header http.Header
}

// problemFor is the one place where an error becomes an HTTP answer. Every
// path that can fail (the handlers, the generated parameter binding, the
// request validator, the middlewares) hands its error here, so a given error
// always yields the same status and type whichever layer noticed it.
func problemFor(err error) problem {
	var (
		conflict    *core.IdempotencyConflictError
		field       *core.FieldError
		maxBytes    *http.MaxBytesError
		media       *unsupportedMediaTypeError
		encoding    *unsupportedEncodingError
		bodyTimeout *bodyTimeoutError
		bodyRead    *bodyReadError
		malformed   *malformedError
		target      *targetNotFoundError
		route       *routeNotFoundError
		method      *methodNotAllowedError
		requestErr  *openapi3filter.RequestError
		paramFormat *apigen.InvalidParamFormatError
		paramNeeded *apigen.RequiredParamError
		paramMany   *apigen.TooManyValuesForParamError
		throttled   *throttledError
		syntax      *json.SyntaxError
		typeErr     *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &conflict):
		fields := make([]apigen.ProblemConflictingFields, len(conflict.ConflictingFields))
		names := make([]string, len(conflict.ConflictingFields))
		for i, f := range conflict.ConflictingFields {
			fields[i] = apigen.ProblemConflictingFields(f)
			names[i] = string(f)
		}
		status := apigen.IntentStatus(conflict.ExistingStatus)
		p := newProblem(http.StatusConflict, TypeIdempotencyConflict, "Idempotency conflict",
			fmt.Sprintf("intent %q exists with a different %s", conflict.IntentID, strings.Join(names, " and ")))
		p.body.IntentId = &conflict.IntentID
		p.body.ConflictingFields = &fields
		p.body.ExistingStatus = &status
		return p
	case errors.As(err, &field):
		return invalidField(field.Field, field.Message)
	case errors.Is(err, core.ErrUnknownTarget):
		p := newProblem(http.StatusUnprocessableEntity, TypeUnknownSubmissionTarget, "Unknown submission target",
			"submissionTarget: is not in the registry; GET /v1/targets lists the known targets")
		p.body.InvalidFields = &[]apigen.InvalidField{{Field: "submissionTarget", Message: "is not in the registry"}}
		return p
	case errors.Is(err, core.ErrIntentNotEnded):
		return newProblem(http.StatusConflict, TypeIntentNotEnded, "Intent not ended",
			"the intent is pending; only ended intents can be resubmitted")
	case errors.Is(err, core.ErrDeliveryRisk):
		p := newProblem(http.StatusConflict, TypeDeliveryRisk, "Delivery risk", err.Error()+
			"; a resubmission could deliver it twice: check with the gateway, then send acknowledgeDeliveryRisk true to resubmit it all the same")
		p.body.InvalidFields = &[]apigen.InvalidField{{Field: "acknowledgeDeliveryRisk",
			Message: "must be true to resubmit an intent whose message the gateway may already have delivered"}}
		return p
	case errors.Is(err, core.ErrResubmissionIDTaken):
		p := newProblem(http.StatusConflict, TypeResubmissionIDTaken, "Resubmission intentId taken",
			"intentId: names another intent; choose another intentId for the resubmission")
		p.body.InvalidFields = &[]apigen.InvalidField{{Field: "intentId", Message: "names another intent"}}
		return p
	case errors.Is(err, core.ErrAttemptInFlight):
		return newProblem(http.StatusConflict, TypeAttemptInFlight, "Attempt in flight",
			"an attempt of the intent is in flight; retry once it finished")
	case errors.Is(err, core.ErrIntentEnded):
		return newProblem(http.StatusConflict, TypeIntentEnded, "Intent ended",
			"the intent has ended; only a pending intent can be cancelled or run now")
	case errors.Is(err, errForbidden):
		return newProblem(http.StatusForbidden, TypeForbidden, "Forbidden", "this operation needs an operator key")
	case errors.Is(err, core.ErrIntentNotFound):
		return newProblem(http.StatusNotFound, TypeIntentNotFound, "Intent not found", "no intent has this intentId")
	case errors.As(err, &target):
		return newProblem(http.StatusNotFound, TypeTargetNotFound, "Target not found", target.Error())
	case errors.Is(err, core.ErrStoreUnavailable):
		p := newProblem(http.StatusServiceUnavailable, TypeStoreUnavailable, "Store unavailable",
			"the store cannot be reached; retry later")
		p.header.Set("Retry-After", "1")
		return p
	case errors.Is(err, core.ErrPausesUnavailable):
		return newProblem(http.StatusNotImplemented, TypeNotAvailable, "Not available", err.Error())
	case errors.As(err, &throttled):
		p := newProblem(http.StatusTooManyRequests, TypeAuthThrottled, "Authentication throttled", throttled.Error())
		p.header.Set("Retry-After", strconv.FormatInt(int64((throttled.retryAfter+time.Second-1)/time.Second), 10))
		return p
	case errors.Is(err, errUnauthorized):
		p := newProblem(http.StatusUnauthorized, TypeUnauthorized, "Unauthorized", "send Authorization: Bearer <api key>")
		p.header.Set("WWW-Authenticate", `Bearer realm="submission-manager"`)
		return p
	case errors.As(err, &maxBytes):
		return newProblem(http.StatusRequestEntityTooLarge, TypePayloadTooLarge, "Payload too large",
			fmt.Sprintf("the request body exceeds %d bytes", maxBytes.Limit))
	case errors.Is(err, core.ErrPayloadTooLarge):
		return newProblem(http.StatusRequestEntityTooLarge, TypePayloadTooLarge, "Payload too large", err.Error())
	case errors.As(err, &media):
		return newProblem(http.StatusUnsupportedMediaType, TypeUnsupportedMediaType, "Unsupported media type", media.Error())
	case errors.As(err, &encoding):
		return newProblem(http.StatusUnsupportedMediaType, TypeUnsupportedMediaType, "Unsupported media type", encoding.Error())
	case errors.Is(err, errTooManyBodies):
		p := newProblem(http.StatusServiceUnavailable, TypeServerBusy, "Server busy", errTooManyBodies.Error())
		p.header.Set("Retry-After", "1")
		return p
	case errors.As(err, &bodyTimeout):
		p := newProblem(http.StatusRequestTimeout, TypeRequestTimeout, "Request timeout",
			"the request body did not arrive within the server's read timeout")
		p.header.Set("Connection", "close")
		return p
	case errors.As(err, &bodyRead):
		return malformedRequest("the request body could not be read (broken framing or a closed connection)")
	case errors.As(err, &malformed):
		return malformedRequest(malformed.reason)
	case errors.Is(err, errBodyRequired):
		return malformedRequest(errBodyRequired.Error())
	case errors.As(err, &route), errors.Is(err, routers.ErrPathNotFound):
		return newProblem(http.StatusNotFound, TypeRouteNotFound, "Not found", "no resource at this path")
	case errors.As(err, &method), errors.Is(err, routers.ErrMethodNotAllowed):
		p := newProblem(http.StatusMethodNotAllowed, TypeMethodNotAllowed, "Method not allowed", "this path does not serve this method")
		if method != nil {
			p.body.Detail = ptr(method.Error())
			p.header.Set("Allow", strings.Join(method.allow, ", "))
		}
		return p
	case errors.As(err, &requestErr):
		return requestProblem(requestErr)
	case errors.As(err, &paramFormat):
		return invalidField(paramFormat.ParamName, "has an invalid format")
	case errors.As(err, &paramNeeded):
		return invalidField(paramNeeded.ParamName, "is required")
	case errors.As(err, &paramMany):
		return invalidField(paramMany.ParamName, "must be given once")
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return invalidField(typeErr.Field, "must be a JSON "+jsonKind(typeErr.Type.Kind()))
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &typeErr):
		return malformedRequest("the request body is not a valid JSON object")
	case errors.Is(err, io.EOF):
		return malformedRequest(errBodyRequired.Error())
	default:
		return newProblem(http.StatusInternalServerError, TypeInternalError, "Internal error",
			"the request failed unexpectedly; it is logged")
	}
}

// requestProblem reads a refusal of the OpenAPI request validator: a bad
// parameter or body field becomes a 422 naming it, a body that is not a JSON
// object of the request's shape a 400.
func requestProblem(e *openapi3filter.RequestError) problem {
	var (
		schema *openapi3.SchemaError
		parse  *openapi3filter.ParseError
	)
	switch {
	case e.Parameter != nil:
		msg := e.Reason
		if errors.As(e.Err, &schema) {
			msg = schemaMessage(schema)
		} else if e.Err != nil && msg == "" {
			msg = e.Err.Error()
		}
		return invalidField(e.Parameter.Name, msg)
	case errors.Is(e.Err, openapi3filter.ErrInvalidRequired):
		return malformedRequest(errBodyRequired.Error())
	case errors.As(e.Err, &parse):
		return malformedRequest("the request body is not valid JSON")
	case errors.As(e.Err, &schema):
		path := schema.JSONPointer()
		if len(path) == 0 {
			return malformedRequest("the request body must be a JSON object")
		}
		return invalidField(strings.Join(path, "."), schemaMessage(schema))
	default:
		return malformedRequest(e.Error())
	}
}

// schemaMessage phrases a schema violation for the field it names.
func schemaMessage(e *openapi3.SchemaError) string {
	switch e.SchemaField {
	case "required":
		return "is required"
	case "minLength":
		return fmt.Sprintf("must be at least %d characters", e.Schema.MinLength)
	case "maxLength":
		if e.Schema.MaxLength != nil {
			return fmt.Sprintf("must be at most %d characters", *e.Schema.MaxLength)
		}
	case "pattern":
		return "must not contain control characters"
	case "format":
		if e.Schema.Format == "date-time" {
			return dateTimeMessage
		}
	case "not":
		if e.Schema.Not != nil && e.Schema.Not.Value != nil && len(e.Schema.Not.Value.Enum) > 0 {
			values := make([]string, len(e.Schema.Not.Value.Enum))
			for i, v := range e.Schema.Not.Value.Enum {
				values[i] = fmt.Sprintf("%q", v)
			}
			return "must not be " + strings.Join(values, " or ")
		}
	case "enum":
		values := make([]string, len(e.Schema.Enum))
		for i, v := range e.Schema.Enum {
			values[i] = fmt.Sprint(v)
		}
		return "must be one of " + strings.Join(values, ", ")
	}
	if e.Reason != "" {
		return e.Reason
	}
	return e.Error()
}

// jsonKind names a Go kind the way a JSON client thinks of it.
func jsonKind(kind reflect.Kind) string {
	switch kind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Bool:
		return "boolean"
	}
	return kind.String()
}

func invalidField(field, message string) problem {
	p := newProblem(http.StatusUnprocessableEntity, TypeInvalidField, "Invalid field", field+": "+message)
	p.body.InvalidFields = &[]apigen.InvalidField{{Field: field, Message: message}}
	return p
}

func malformedRequest(detail string) problem {
	return newProblem(http.StatusBadRequest, TypeMalformedRequest, "Malformed request", detail)
}

func newProblem(status int, typ, title, detail string) problem {
	return problem{
		body:   apigen.Problem{Type: typ, Title: title, Status: status, Detail: &detail},
		header: http.Header{},
	}
}

// writeProblem answers a request with the problem for err. Server-side
// failures are logged with the error, which the client never sees.
func writeProblem(log *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	p := problemFor(err)
	p.body.Instance = ptr(r.URL.Path)
	// A full house of request bodies is load, not a failure: the 503s
	// show in the request metrics, and logging each would flood the log
	// exactly when the server is busiest.
	if p.body.Status >= http.StatusInternalServerError && !errors.Is(err, errTooManyBodies) {
		log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path,
			"status", p.body.Status, "error", err)
	} else {
		log.DebugContext(r.Context(), "request refused", "method", r.Method, "path", r.URL.Path,
			"status", p.body.Status, "error", err)
	}
	body, mErr := json.Marshal(p.body)
	if mErr != nil { // a Problem always marshals; keep the status regardless
		body = []byte(`{"type":"` + TypeInternalError + `","title":"Internal error","status":500}`)
	}
	h := w.Header()
	for k, v := range p.header {
		h[k] = v
	}
	h.Set("Content-Type", problemContentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(p.body.Status)
	_, _ = w.Write(body)
}

func ptr[T any](v T) *T { return &v }

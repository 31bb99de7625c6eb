package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/submissionmanager/submission-manager/adapters/httpapi/internal/apigen"
	"github.com/submissionmanager/submission-manager/core"
)

// TestProblemForMapsEveryError pins each error the API can meet to its
// status, stable type and the members that name what to fix.
func TestProblemForMapsEveryError(t *testing.T) {
	conflict := &core.IdempotencyConflictError{
		IntentID:          "order-1",
		ConflictingFields: []core.ConflictField{core.ConflictSubmissionTarget, core.ConflictPayload},
		ExistingTarget:    "sms.realtime",
		IncomingTarget:    "push.realtime",
		ExistingPayload:   `{"a":1}`,
		IncomingPayload:   `{"a":2}`,
		ExistingStatus:    core.StatusAccepted,
	}
	tooLong := uint64(255)
	cases := []struct {
		name          string
		err           error
		status        int
		typ           string
		invalidFields []apigen.InvalidField
		header        map[string]string
	}{
		{name: "field error", err: &core.FieldError{Field: "intentId", Message: "must not be empty"},
			status: 422, typ: TypeInvalidField,
			invalidFields: []apigen.InvalidField{{Field: "intentId", Message: "must not be empty"}}},
		{name: "wrapped field error", err: fmt.Errorf("submit: %w", &core.FieldError{Field: "payload", Message: "is required"}),
			status: 422, typ: TypeInvalidField,
			invalidFields: []apigen.InvalidField{{Field: "payload", Message: "is required"}}},
		{name: "unknown target", err: core.ErrUnknownTarget, status: 422, typ: TypeUnknownSubmissionTarget,
			invalidFields: []apigen.InvalidField{{Field: "submissionTarget", Message: "is not in the registry"}}},
		{name: "wrapped unknown target", err: fmt.Errorf("lookup %q: %w", "x", core.ErrUnknownTarget),
			status: 422, typ: TypeUnknownSubmissionTarget,
			invalidFields: []apigen.InvalidField{{Field: "submissionTarget", Message: "is not in the registry"}}},
		{name: "conflict", err: conflict, status: 409, typ: TypeIdempotencyConflict},
		{name: "intent not found", err: core.ErrIntentNotFound, status: 404, typ: TypeIntentNotFound},
		{name: "attempt in flight", err: fmt.Errorf("cancel: %w", core.ErrAttemptInFlight), status: 409, typ: TypeAttemptInFlight},
		{name: "intent ended", err: fmt.Errorf("run now: %w", core.ErrIntentEnded), status: 409, typ: TypeIntentEnded},
		{name: "target not found", err: &targetNotFoundError{target: "x"}, status: 404, typ: TypeTargetNotFound},
		{name: "store unavailable", err: fmt.Errorf("get: %w", core.ErrStoreUnavailable), status: 503,
			typ: TypeStoreUnavailable, header: map[string]string{"Retry-After": "1"}},
		{name: "throttled", err: &throttledError{retryAfter: 5001 * time.Millisecond}, status: 429, typ: TypeAuthThrottled,
			header: map[string]string{"Retry-After": "6"}},
		{name: "unauthorized", err: errUnauthorized, status: 401, typ: TypeUnauthorized,
			header: map[string]string{"WWW-Authenticate": `Bearer realm="submission-manager"`}},
		{name: "body over the limit", err: &http.MaxBytesError{Limit: 10}, status: 413, typ: TypePayloadTooLarge},
		{name: "body over the limit, seen by the validator", err: &openapi3filter.RequestError{
			RequestBody: &openapi3.RequestBody{}, Reason: "reading failed", Err: &http.MaxBytesError{Limit: 10}},
			status: 413, typ: TypePayloadTooLarge},
		{name: "payload over the limit", err: fmt.Errorf("%w: 11 bytes compacted, the limit is 10", core.ErrPayloadTooLarge),
			status: 413, typ: TypePayloadTooLarge},
		{name: "media type", err: &unsupportedMediaTypeError{contentType: "text/plain"}, status: 415, typ: TypeUnsupportedMediaType},
		{name: "malformed", err: &malformedError{reason: "nope"}, status: 400, typ: TypeMalformedRequest},
		{name: "no body", err: errBodyRequired, status: 400, typ: TypeMalformedRequest},
		{name: "route", err: &routeNotFoundError{path: "/x"}, status: 404, typ: TypeRouteNotFound},
		{name: "validator route", err: routers.ErrPathNotFound, status: 404, typ: TypeRouteNotFound},
		{name: "method", err: &methodNotAllowedError{method: "DELETE", allow: []string{"GET", "POST"}},
			status: 405, typ: TypeMethodNotAllowed, header: map[string]string{"Allow": "GET, POST"}},
		{name: "validator method", err: routers.ErrMethodNotAllowed, status: 405, typ: TypeMethodNotAllowed},
		{name: "bad query parameter", err: &openapi3filter.RequestError{
			Parameter: &openapi3.Parameter{Name: "limit", In: "query"},
			Err:       &openapi3.SchemaError{SchemaField: "maximum", Reason: "number must be at most 500"}},
			status: 422, typ: TypeInvalidField,
			invalidFields: []apigen.InvalidField{{Field: "limit", Message: "number must be at most 500"}}},
		{name: "body field too long", err: &openapi3filter.RequestError{
			RequestBody: &openapi3.RequestBody{},
			Err:         schemaErrorAt(&openapi3.Schema{MaxLength: &tooLong}, "maxLength", "intentId")},
			status: 422, typ: TypeInvalidField,
			invalidFields: []apigen.InvalidField{{Field: "intentId", Message: "must be at most 255 characters"}}},
		{name: "body field missing", err: &openapi3filter.RequestError{
			RequestBody: &openapi3.RequestBody{},
			Err:         schemaErrorAt(&openapi3.Schema{}, "required", "payload")},
			status: 422, typ: TypeInvalidField,
			invalidFields: []apigen.InvalidField{{Field: "payload", Message: "is required"}}},
		{name: "body not an object", err: &openapi3filter.RequestError{
			RequestBody: &openapi3.RequestBody{},
			Err:         &openapi3.SchemaError{SchemaField: "type", Reason: "value must be an object"}},
			status: 400, typ: TypeMalformedRequest},
		{name: "body not JSON", err: &openapi3filter.RequestError{
			RequestBody: &openapi3.RequestBody{}, Err: &openapi3filter.ParseError{Reason: "bad"}},
			status: 400, typ: TypeMalformedRequest},
		{name: "body empty", err: &openapi3filter.RequestError{
			RequestBody: &openapi3.RequestBody{}, Err: openapi3filter.ErrInvalidRequired},
			status: 400, typ: TypeMalformedRequest},
		{name: "generated parameter binding", err: &apigen.InvalidParamFormatError{ParamName: "limit", Err: errors.New("x")},
			status: 422, typ: TypeInvalidField,
			invalidFields: []apigen.InvalidField{{Field: "limit", Message: "has an invalid format"}}},
		{name: "strict decoder syntax error", err: fmt.Errorf("can't decode JSON body: %w", &json.SyntaxError{}),
			status: 400, typ: TypeMalformedRequest},
		{name: "strict decoder truncated body", err: fmt.Errorf("can't decode JSON body: %w", io.ErrUnexpectedEOF),
			status: 400, typ: TypeMalformedRequest},
		{name: "strict decoder wrong type", err: fmt.Errorf("can't decode JSON body: %w",
			&json.UnmarshalTypeError{Field: "intentId", Type: reflect.TypeFor[string]()}),
			status: 422, typ: TypeInvalidField,
			invalidFields: []apigen.InvalidField{{Field: "intentId", Message: "must be a JSON string"}}},
		{name: "anything else", err: errors.New("disk on fire"), status: 500, typ: TypeInternalError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := problemFor(tc.err)
			if p.body.Status != tc.status || p.body.Type != tc.typ {
				t.Fatalf("problemFor(%v) = %d %s, want %d %s", tc.err, p.body.Status, p.body.Type, tc.status, tc.typ)
			}
			if p.body.Title == "" || p.body.Detail == nil || *p.body.Detail == "" {
				t.Errorf("problem lacks a title or detail: %+v", p.body)
			}
			var got []apigen.InvalidField
			if p.body.InvalidFields != nil {
				got = *p.body.InvalidFields
			}
			if !reflect.DeepEqual(got, tc.invalidFields) {
				t.Errorf("invalidFields = %+v, want %+v", got, tc.invalidFields)
			}
			for k, v := range tc.header {
				if got := p.header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if tc.status != 409 && (p.body.ConflictingFields != nil || p.body.ExistingStatus != nil) {
				t.Errorf("conflict members on a %d: %+v", tc.status, p.body)
			}
		})
	}
}

func schemaErrorAt(schema *openapi3.Schema, field, key string) error {
	// A SchemaError's path is unexported; validating a real value is the only
	// way to get one with a path, exactly as the validator produces it.
	obj := openapi3.NewObjectSchema().WithProperty(key, schema)
	if field == "required" {
		obj.Required = []string{key}
	}
	value := map[string]any{}
	if field != "required" {
		value[key] = strings.Repeat("x", 300)
	}
	err := obj.VisitJSON(value)
	var se *openapi3.SchemaError
	if !errors.As(err, &se) || se.SchemaField != field {
		panic(fmt.Sprintf("schemaErrorAt(%s, %s) got %v", field, key, err))
	}
	return se
}

func TestProblemForConflictNamesFieldsAndExistingStatus(t *testing.T) {
	p := problemFor(&core.IdempotencyConflictError{
		IntentID:          "order-1",
		ConflictingFields: []core.ConflictField{core.ConflictPayload},
		ExistingStatus:    core.StatusPending,
	})
	if p.body.IntentId == nil || *p.body.IntentId != "order-1" {
		t.Errorf("intentId = %v, want order-1", p.body.IntentId)
	}
	if p.body.ConflictingFields == nil || !slices.Equal(*p.body.ConflictingFields, []apigen.ProblemConflictingFields{"payload"}) {
		t.Errorf("conflictingFields = %v, want [payload]", p.body.ConflictingFields)
	}
	if p.body.ExistingStatus == nil || *p.body.ExistingStatus != apigen.IntentStatusPending {
		t.Errorf("existingStatus = %v, want pending", p.body.ExistingStatus)
	}
}

// TestProblemForHidesInternalErrors checks that a server-side failure tells
// the client nothing about its cause.
func TestProblemForHidesInternalErrors(t *testing.T) {
	p := problemFor(errors.New("dial tcp 10.0.0.7:1433: password=hunter2"))
	if strings.Contains(*p.body.Detail, "hunter2") || strings.Contains(*p.body.Detail, "10.0.0.7") {
		t.Fatalf("internal error leaked into the detail: %q", *p.body.Detail)
	}
}

// TestWriteProblemShape checks the RFC 9457 document on the wire: media type,
// the standard members, the extension members, and the status line matching
// the status member.
func TestWriteProblemShape(t *testing.T) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/v1/intents", nil)
	writeProblem(slog.New(slog.DiscardHandler), rec, req, &core.IdempotencyConflictError{
		IntentID:          "order-1",
		ConflictingFields: []core.ConflictField{core.ConflictPayload},
		ExistingStatus:    core.StatusRejected,
	})
	if rec.Code != http.StatusConflict {
		t.Fatalf("status line %d, want 409", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json", ct)
	}
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	want := map[string]any{
		"type":              TypeIdempotencyConflict,
		"title":             "Idempotency conflict",
		"status":            float64(409),
		"detail":            `intent "order-1" exists with a different payload`,
		"instance":          "/v1/intents",
		"intentId":          "order-1",
		"conflictingFields": []any{"payload"},
		"existingStatus":    "rejected",
	}
	if !reflect.DeepEqual(doc, want) {
		t.Fatalf("problem document\n got %v\nwant %v", doc, want)
	}
}

// TestProblemTypesAreDocumented checks that every problem type points at a
// section of docs/api.md that exists, so a client following the link lands
// on its explanation.
func TestProblemTypesAreDocumented(t *testing.T) {
	doc, err := readRepoFile("docs/api.md")
	if err != nil {
		t.Fatalf("docs/api.md: %v", err)
	}
	for _, typ := range []string{TypeMalformedRequest, TypeUnauthorized, TypeIntentNotFound, TypeTargetNotFound,
		TypeRouteNotFound, TypeMethodNotAllowed, TypeIdempotencyConflict, TypePayloadTooLarge,
		TypeUnsupportedMediaType, TypeInvalidField, TypeUnknownSubmissionTarget, TypeStoreUnavailable,
		TypeInternalError, TypeAuthThrottled, TypeIntentEnded, TypeAttemptInFlight} {
		anchor := strings.TrimPrefix(typ, ProblemTypeBase)
		if !strings.Contains(doc, "### "+anchor+"\n") {
			t.Errorf("docs/api.md has no section %q for problem type %s", "### "+anchor, typ)
		}
	}
}

package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3filter"
	nethttpmiddleware "github.com/oapi-codegen/nethttp-middleware"

	"github.com/submissionmanager/submission-manager/adapters/httpapi/internal/apigen"
)

// bodyEnvelopeBytes is what a submission may carry beyond its payload: the
// intentId and submissionTarget (255 characters each, possibly escaped) and
// the JSON around them, with room to spare.
const bodyEnvelopeBytes = 16 << 10

// bodyLimit is the most of a request body the API reads. The payload limit
// applies to compacted JSON, so a pretty-printed payload may be larger on the
// wire; twice the limit leaves room for generous indentation while still
// bounding what a client can make the server buffer.
func bodyLimit(maxPayloadBytes int64) int64 {
	return 2*maxPayloadBytes + bodyEnvelopeBytes
}

// bearerKey returns the key of an "Authorization: Bearer <key>" header
// value (the scheme in any case, blanks around the key ignored), or "" when
// the value is not of that form. core.KeySet compares it with the keys.
func bearerKey(authorization string) string {
	const scheme = "bearer "
	if len(authorization) <= len(scheme) || !strings.EqualFold(authorization[:len(scheme)], scheme) {
		return ""
	}
	return strings.TrimSpace(authorization[len(scheme):])
}

// validateRequests checks every request's path and query parameters
// against the embedded OpenAPI document before a handler sees them, so
// handlers only ever get well-formed input and refusals name the offending
// field. Authentication is not the validator's job (requireRole runs
// first). Request bodies are not the validator's either: it would decode the
// whole body into a tree (many times the body's size in memory) and convert
// numbers on the way, refusing payloads such as 1e999999999; decodeSubmission
// checks the submit body against the same schema in one pass instead.
func validateRequests(log *slog.Logger) (apigen.MiddlewareFunc, error) {
	spec, err := apigen.GetSwagger()
	if err != nil {
		return nil, err
	}
	spec.Servers = nil
	// Authentication is requireRole's (the validator's would be a no-op):
	// without the security requirements the validator skips that work.
	spec.Security = nil
	for _, path := range spec.Paths.Map() {
		for _, op := range path.Operations() {
			op.Security = nil
		}
	}
	mw := nethttpmiddleware.OapiRequestValidatorWithOptions(spec, &nethttpmiddleware.Options{
		Options: openapi3filter.Options{
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
			// The handlers apply defaults (the page size) themselves, and no
			// request schema declares readOnly fields.
			SkipSettingDefaults:        true,
			ExcludeReadOnlyValidations: true,
			ExcludeRequestBody:         true,
		},
		DoNotValidateServers:  true,
		SilenceServersWarning: true,
		DiscardValidatedValue: true,
		ErrorHandlerWithOpts: func(_ context.Context, err error, w http.ResponseWriter, r *http.Request, _ nethttpmiddleware.ErrorHandlerOpts) {
			writeProblem(log, w, r, err)
		},
	})
	return apigen.MiddlewareFunc(mw), nil
}

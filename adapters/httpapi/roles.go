package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// role is what a request must prove to reach a route when keys are
// configured.
type role int

const (
	// roleNone needs no key: health and readiness, which load balancers
	// call without secrets.
	roleNone role = iota
	// roleClient needs a client or an operator key.
	roleClient
	// roleOperator needs an operator key; a client key gets 403.
	roleOperator
)

func (r role) String() string {
	return [...]string{"none", "client", "operator"}[r]
}

// routeRoles is the one table of who may call what, keyed by the route
// pattern the mux serves (the OpenAPI path under its method). A client key
// submits (one intent or a batch) and reads; what acts beyond the caller's
// own submissions (resubmission, cancel and run now, pausing and resuming
// gateways) needs an operator key. api/openapi.yaml states the same: an
// open operation has `security: []`, an operator one lists 403, and a
// test holds every operation of the file to a row here and to its answers.
var routeRoles = map[string]role{
	"POST /v1/intents":                          roleClient,
	"POST " + batchPath:                         roleClient,
	"GET /v1/intents":                           roleClient,
	"GET /v1/intents/{intentId}":                roleClient,
	"POST /v1/intents/{intentId}/resubmissions": roleOperator,
	"POST /v1/intents/{intentId}/cancel":        roleOperator,
	"POST /v1/intents/{intentId}/run-now":       roleOperator,
	"GET /v1/targets":                           roleClient,
	"GET /v1/targets/{submissionTarget}":        roleClient,
	"GET /v1/gateways":                          roleClient,
	"POST /v1/gateways/pause":                   roleOperator,
	"POST /v1/gateways/resume":                  roleOperator,
	"GET /healthz":                              roleNone,
	"GET /readyz":                               roleNone,
}

// notFoundPattern is the catch-all route that answers 404 or 405.
const notFoundPattern = "/"

// requiredRole is the role a request needs, from the pattern the mux
// routes it to. What has no row is judged by its path: outside /v1 (the
// metrics and console mounted beside the API, which guard themselves or
// need no secret) it is open; under /v1, a path or method no route serves
// needs any key before it learns 404 or 405, and a route without a row is
// closed to clients, so a forgotten row never opens an operation.
func requiredRole(pattern, path string) role {
	if r, ok := routeRoles[pattern]; ok {
		return r
	}
	switch {
	case path != "/v1" && !strings.HasPrefix(path, "/v1/"):
		return roleNone
	case pattern == notFoundPattern:
		return roleClient
	default:
		return roleOperator
	}
}

// requireRole guards the mux's routes when keys are configured: a request
// needs a known key (401 otherwise), and an operator key where its route's
// role says so (403 for a client key). It asks the mux which route would
// serve the request, so the role is that of the handler that runs, however
// the path is spelled. A client address that presented too many unknown
// keys is refused (429) before its key is looked at, and every unknown key
// it presents is counted.
func requireRole(keys core.KeySet, throttle ports.AuthThrottle, log *slog.Logger, mux *http.ServeMux) http.Handler {
	if keys.Open() {
		return mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := mux.Handler(r)
		need := requiredRole(pattern, r.URL.Path)
		if need == roleNone {
			mux.ServeHTTP(w, r)
			return
		}
		client := ports.AuthClient{Surface: ports.SurfaceAPI, Peer: r.RemoteAddr, ForwardedFor: r.Header.Values("X-Forwarded-For")}
		if wait := throttle.Admit(client); wait > 0 {
			writeProblem(log, w, r, &throttledError{retryAfter: wait})
			return
		}
		key := bearerKey(r.Header.Get("Authorization"))
		presented := keys.Role(key)
		switch presented {
		case core.RoleOperator:
		case core.RoleClient:
			if need == roleOperator {
				writeProblem(log, w, r, errForbidden)
				return
			}
		default:
			if key != "" {
				throttle.Failed(client)
			}
			writeProblem(log, w, r, errUnauthorized)
			return
		}
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyRoleContext{}, presented)))
	})
}

// keyRoleContext carries the role of the key a request presented to the
// handlers, which record it as the actor of an operator's action. A request
// to an API without keys carries none: its role is core.RoleNone.
type keyRoleContext struct{}

// keyRole is the role of the key the request presented.
func keyRole(ctx context.Context) core.Role {
	r, _ := ctx.Value(keyRoleContext{}).(core.Role)
	return r
}

// admitAll is the throttle of an API configured without one.
type admitAll struct{}

func (admitAll) Admit(ports.AuthClient) time.Duration  { return 0 }
func (admitAll) Failed(ports.AuthClient) time.Duration { return 0 }

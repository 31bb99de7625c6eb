package httpapi

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/submissionmanager/submission-manager/core"
)

// clientMay reports whether a client key may make the request: reads, and
// submitting intents. Everything else under /v1 (resubmissions, gateway
// pause and resume, and whatever operator operation comes next) needs an
// operator key, so a new operation is closed to clients unless listed here.
func clientMay(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return true
	case http.MethodPost:
		return r.URL.Path == "/v1/intents"
	}
	return false
}

// requireRole guards /v1 when keys are configured: a request needs a known
// key (401 otherwise), and an operator key for what clients may not do
// (403). Health, readiness and operator endpoints outside /v1 stay open so
// load balancers and scrapers need no secret; the console guards itself.
func requireRole(keys core.KeySet, log *slog.Logger, next http.Handler) http.Handler {
	if keys.Open() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1" && !strings.HasPrefix(r.URL.Path, "/v1/") {
			next.ServeHTTP(w, r)
			return
		}
		switch keys.Role(bearerKey(r.Header.Get("Authorization"))) {
		case core.RoleOperator:
		case core.RoleClient:
			if !clientMay(r) {
				writeProblem(log, w, r, errForbidden)
				return
			}
		default:
			writeProblem(log, w, r, errUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

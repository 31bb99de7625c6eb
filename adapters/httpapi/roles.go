package httpapi

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
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
// (403). A client address that presented too many unknown keys is refused
// (429) before its key is looked at, and every unknown key it presents is
// counted. Health, readiness and operator endpoints outside /v1 stay open
// so load balancers and scrapers need no secret; the console guards itself.
func requireRole(keys core.KeySet, throttle ports.AuthThrottle, log *slog.Logger, next http.Handler) http.Handler {
	if keys.Open() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1" && !strings.HasPrefix(r.URL.Path, "/v1/") {
			next.ServeHTTP(w, r)
			return
		}
		client := ports.AuthClient{Surface: ports.SurfaceAPI, Peer: r.RemoteAddr, ForwardedFor: r.Header.Values("X-Forwarded-For")}
		if wait := throttle.Admit(client); wait > 0 {
			writeProblem(log, w, r, &throttledError{retryAfter: wait})
			return
		}
		key := bearerKey(r.Header.Get("Authorization"))
		switch keys.Role(key) {
		case core.RoleOperator:
		case core.RoleClient:
			if !clientMay(r) {
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
		next.ServeHTTP(w, r)
	})
}

// admitAll is the throttle of an API configured without one.
type admitAll struct{}

func (admitAll) Admit(ports.AuthClient) time.Duration  { return 0 }
func (admitAll) Failed(ports.AuthClient) time.Duration { return 0 }

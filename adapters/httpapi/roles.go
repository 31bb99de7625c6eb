package httpapi

import (
	"log/slog"
	"net/http"
	"strings"
)

// keyring holds the two kinds of keys. Client keys submit and read;
// operator keys may do everything, including what changes more than one
// client's own submissions (resubmission, gateway controls). With no key
// of either kind the API is open, as a zero-configuration loopback service.
type keyring struct {
	client   apiKeys
	operator apiKeys
}

func newKeyring(clientKeys, operatorKeys []string) keyring {
	return keyring{client: newAPIKeys(clientKeys), operator: newAPIKeys(operatorKeys)}
}

// open reports whether no key is configured at all.
func (k keyring) open() bool { return !k.client.enabled() && !k.operator.enabled() }

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
func requireRole(keys keyring, log *slog.Logger, next http.Handler) http.Handler {
	if keys.open() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1" && !strings.HasPrefix(r.URL.Path, "/v1/") {
			next.ServeHTTP(w, r)
			return
		}
		auth := r.Header.Get("Authorization")
		switch {
		case keys.operator.allows(auth):
		case keys.client.allows(auth):
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

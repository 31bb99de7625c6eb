package app

import (
	"net/http"
	"net/http/pprof"

	"github.com/submissionmanager/submission-manager/adapters/prometheus"
)

// mountOperatorRoutes adds the endpoints operators use beside the API: the
// Prometheus metrics and, when asked for, Go profiling. This is the hook
// where further operator endpoints belong; like the health endpoints they
// sit outside /v1 and so never require an API key. Profiling is off by
// default because it exposes internals and can cost CPU on demand. The
// cmdline endpoint is left out: it would print --api-keys and database
// passwords to anyone who can reach the listener.
func mountOperatorRoutes(mux *http.ServeMux, metrics *prometheus.Metrics, withPprof bool) {
	mux.Handle("GET /metrics", metrics.Handler())
	if !withPprof {
		return
	}
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}

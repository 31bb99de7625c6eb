package command

import (
	"net/http"
	"net/http/pprof"

	"github.com/submissionmanager/submission-manager/adapters/prometheus"
)

// mountOperatorRoutes adds the endpoints operators use beside the API: the
// Prometheus metrics. This is the hook where further operator endpoints
// belong; like the health endpoints they sit outside /v1 and so never
// require an API key.
func mountOperatorRoutes(mux *http.ServeMux, metrics *prometheus.Metrics) {
	mux.Handle("GET /metrics", metrics.Handler())
}

// pprofMux serves Go profiling, for the listener of its own that --pprof
// opens (loopback by default): profiling exposes internals and costs CPU on
// demand, so it never shares the listener clients reach, and a 30-second
// CPU profile is not cut by the API's write timeout. The cmdline endpoint
// is left out: it would print --api-keys and database passwords.
func pprofMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	return mux
}

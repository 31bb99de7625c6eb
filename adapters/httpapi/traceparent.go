package httpapi

import "net/http"

// traceParentHeader is the W3C Trace Context header a submission may carry
// (api/openapi.yaml, TraceParent), in net/http's canonical form. The
// service judges its value (core.NormalizeTraceParent) and ignores what is
// not a traceparent; the API only hands it over.
const traceParentHeader = "Traceparent"

// oneTraceParent drops the traceparent of a request that sends more than
// one: the W3C specification makes such a request's trace context invalid,
// to be ignored, where the generated binding would refuse the repeated
// header with a 400. A trace context never costs a submission.
func oneTraceParent(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.Header.Values(traceParentHeader)) > 1 {
			r.Header.Del(traceParentHeader)
		}
		next.ServeHTTP(w, r)
	})
}

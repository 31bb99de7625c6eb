package gateway

import (
	"net/http"

	"github.com/submissionmanager/submission-manager/core"
)

// traceParentHeader is the W3C Trace Context header, in the canonical form
// net/http keeps header keys in.
const traceParentHeader = "Traceparent"

// withTraceParent adds the call's traceparent to its headers, so that the
// gateway sees the trace the intent was submitted in and its own spans
// join it. The value comes from the intent (or the gateway call's span) in
// core.NormalizeTraceParent's form; anything else, which could not be a
// header value a gateway should trust, is left out rather than sent.
func withTraceParent(h http.Header, traceParent string) {
	if traceParent == "" {
		return
	}
	if tp, ok := core.NormalizeTraceParent(traceParent); ok && tp == traceParent {
		h[traceParentHeader] = []string{tp}
	}
}

package gatewaysim

import (
	"net/http"

	"github.com/submissionmanager/submission-manager/api/gatewayapi"
)

// LookupSubmission serves the optional lookup of the gateway protocol: the
// outcome the reference was given, or never_received, and counts the
// lookup under the reference with its traceparent header. With
// Config.NoLookup it answers 404, as a gateway without the route does.
func (g *gateway) LookupSubmission(w http.ResponseWriter, r *http.Request, ref string) {
	if g.behaviour.noLookup {
		http.NotFound(w, nil)
		return
	}
	o, ok := g.state.lookup(ref, traceParentOf(r))
	if !ok {
		writeJSON(w, http.StatusOK, gatewayapi.LookupAnswer{Lookup: gatewayapi.NeverReceived})
		return
	}
	ans := gatewayapi.SubmissionAnswer{Status: gatewayapi.SubmissionAnswerStatus(o.Status)}
	if o.Reason != "" {
		ans.Reason = &o.Reason
	}
	if o.MessageID != "" {
		ans.MessageId = &o.MessageID
	}
	writeJSON(w, http.StatusOK, gatewayapi.LookupAnswer{Lookup: gatewayapi.Answered, Answer: &ans})
}

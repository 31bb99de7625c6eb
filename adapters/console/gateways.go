package console

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// GatewayState is one gateway as the overview shows it: the gateway
// operator's status (ports.GatewayOperator) put in the console's words.
type GatewayState struct {
	Name        string
	GatewayType core.GatewayType
	// Breaker is the circuit breaker's state ("closed", "open",
	// "half-open"); empty when the gateway has no breaker or this instance
	// does not lead.
	Breaker string
	// Limit describes the rate or concurrency limit in force, if any.
	Limit  string
	Paused bool
	// Reason is why the breaker is open, from the leader's recent calls.
	Reason    string
	UpdatedAt time.Time
}

// gatewayStates lists each gateway URL the registry routes to, with its
// breaker and limits when this instance leads, and the time of its pause or
// next probe.
func gatewayStates(o ports.GatewayOverview) []GatewayState {
	out := make([]GatewayState, 0, len(o.Gateways))
	for _, s := range o.Gateways {
		st := GatewayState{Name: s.GatewayURL, GatewayType: s.GatewayType, Paused: s.Paused}
		if e := s.Executor; e != nil {
			st.Breaker = string(e.Breaker)
			if e.Breaker == core.BreakerOpen {
				st.Reason = fmt.Sprintf("%d of the last %d calls failed; probe at %s", e.RecentFailures, e.RecentCalls, e.ProbeAt.Format("15:04:05"))
				st.UpdatedAt = e.ProbeAt
			}
			st.Limit = limitText(*e)
		}
		for _, p := range o.Pauses {
			if p.GatewayURL == s.GatewayURL || p.GatewayType == s.GatewayType {
				st.UpdatedAt = p.PausedAt
			}
		}
		out = append(out, st)
	}
	return out
}

// limitText describes a gateway's limits in force, or nothing.
func limitText(e ports.GatewayExecution) string {
	switch {
	case e.MaxInFlight > 0 && e.Rate > 0:
		return fmt.Sprintf("%d in flight, %g/s (burst %d)", e.MaxInFlight, e.Rate, e.Burst)
	case e.MaxInFlight > 0:
		return fmt.Sprintf("%d in flight", e.MaxInFlight)
	case e.Rate > 0:
		return fmt.Sprintf("%g/s (burst %d)", e.Rate, e.Burst)
	}
	return ""
}

// gatewaySelector reads a console gateway name as a type or a URL.
func gatewaySelector(name string) (core.GatewayType, string) {
	if slices.Contains(core.GatewayTypes(), core.GatewayType(name)) {
		return core.GatewayType(name), ""
	}
	return "", name
}

// gatewayAction pauses or resumes the gateway named in the form.
func (c *Console) gatewayAction(w http.ResponseWriter, r *http.Request, ss session) {
	if c.cfg.Gateways == nil {
		c.render(w, r, http.StatusNotFound, "error", page{Title: "Not available", Session: ss,
			Error: "Gateway controls are not available in this build."})
		return
	}
	name := r.PostFormValue("gateway")
	t, url := gatewaySelector(name)
	var err error
	switch r.PathValue("action") {
	case "pause":
		_, err = c.cfg.Gateways.PauseGateway(r.Context(), t, url)
	case "resume":
		_, err = c.cfg.Gateways.ResumeGateway(r.Context(), t, url)
	default:
		c.render(w, r, http.StatusNotFound, "error", page{Title: "Not found", Session: ss, Error: "No such gateway action."})
		return
	}
	if err != nil {
		c.render(w, r, http.StatusConflict, "error", page{Title: "Gateway unchanged", Session: ss,
			Error: "Gateway " + name + " was not changed: " + err.Error()})
		return
	}
	c.log.Info("console gateway action", "gateway", name, "action", r.PathValue("action"))
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

package console

import (
	"context"
	"net/http"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// GatewayState is one gateway as the overview shows it. It is the
// console's own type, not a port: gateway protection reports its state in
// its own terms, and cmd translates (adapters never import each other).
type GatewayState struct {
	Name        string
	GatewayType core.GatewayType
	// Breaker is the circuit breaker's state ("closed", "open",
	// "half-open"); empty when the gateway has no breaker.
	Breaker string
	// Limit describes the rate or concurrency limit in force, if any.
	Limit  string
	Paused bool
	// Reason is why the gateway is paused or its breaker open, as written
	// by an operator or a gateway: the console escapes it like all data.
	Reason    string
	UpdatedAt time.Time
}

// GatewayReporter reports the gateways' state. Optional: without one the
// overview says that gateway state is not available.
type GatewayReporter interface {
	Gateways(ctx context.Context) ([]GatewayState, error)
}

// GatewayController pauses and resumes a gateway. Optional: without one
// the overview shows no pause or resume buttons.
type GatewayController interface {
	PauseGateway(ctx context.Context, name string) error
	ResumeGateway(ctx context.Context, name string) error
}

// gatewayAction pauses or resumes the gateway named in the form.
func (c *Console) gatewayAction(w http.ResponseWriter, r *http.Request, ss session) {
	if c.cfg.GatewayControl == nil {
		c.render(w, r, http.StatusNotFound, "error", page{Title: "Not available", Session: ss,
			Error: "Gateway controls are not available in this build."})
		return
	}
	name := r.PostFormValue("gateway")
	var err error
	switch r.PathValue("action") {
	case "pause":
		err = c.cfg.GatewayControl.PauseGateway(r.Context(), name)
	case "resume":
		err = c.cfg.GatewayControl.ResumeGateway(r.Context(), name)
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

package gatewaysim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/submissionmanager/submission-manager/api/gatewayapi"
)

// DefaultOutageMode is the fault of an outage that names none: what a load
// balancer in front of a dead gateway answers.
var DefaultOutageMode = HTTPStatusMode(http.StatusServiceUnavailable)

// OutageStats tells whether an outage is on and how many submissions the
// current (or, once it ended, the last) outage received: what a test of
// the executor's circuit breaker asserts on.
type OutageStats struct {
	On    bool
	Mode  Mode
	Calls int64
}

// outage is one gateway's outage switch. Unlike a mode, an outage overrides
// scripts and leaves the references untouched, so a test can take a gateway
// down and bring it back without disturbing what it scripted.
type outage struct {
	mu    sync.Mutex
	on    bool
	mode  Mode
	calls int64
}

// parseOutageMode accepts the faults an outage may answer: every mode but
// normal and the accept_then_* modes (a gateway that is down accepts nothing).
func parseOutageMode(s string) (Mode, error) {
	if s == "" {
		return DefaultOutageMode, nil
	}
	m, err := ParseMode(s)
	if err != nil {
		return "", err
	}
	if m == ModeNormal || m.accepts() {
		return "", fmt.Errorf("outage mode %q: an outage answers a fault that accepts nothing, not %s", s, m)
	}
	return m, nil
}

// set starts (zeroing the call count) or ends the outage.
func (o *outage) set(on bool, m Mode) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if on && !o.on {
		o.calls = 0
	}
	o.on = on
	if on {
		o.mode = m
	}
}

// take counts a submission if the outage is on and returns its fault.
func (o *outage) take() (Mode, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.on {
		return "", false
	}
	o.calls++
	return o.mode, true
}

func (o *outage) stats() OutageStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	return OutageStats{On: o.on, Mode: o.mode, Calls: o.calls}
}

// SetOutage serves POST /control/outage.
func (g *gateway) SetOutage(w http.ResponseWriter, r *http.Request) {
	var req gatewayapi.OutageRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, gatewayapi.ControlError{Error: `outage request must be {"on": true|false, "mode": "..."}: ` + err.Error()})
		return
	}
	mode := ""
	if req.Mode != nil {
		mode = *req.Mode
	}
	m, err := parseOutageMode(mode)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, gatewayapi.ControlError{Error: err.Error()})
		return
	}
	g.setOutage(req.On, m)
	w.WriteHeader(http.StatusNoContent)
}

func (g *gateway) setOutage(on bool, m Mode) {
	g.outage.set(on, m)
	g.logger.Info("gateway simulator outage set", "gateway_type", g.gatewayType, "on", on, "mode", m)
}

// SetOutage starts (on) or ends an outage on both gateways; mode is the
// fault answered meanwhile, empty for DefaultOutageMode.
func (s *Simulator) SetOutage(on bool, mode Mode) error {
	m, err := parseOutageMode(string(mode))
	if err != nil {
		return err
	}
	for _, g := range s.gateways {
		g.setOutage(on, m)
	}
	return nil
}

func toAPIOutage(o OutageStats) gatewayapi.OutageStats {
	out := gatewayapi.OutageStats{On: o.On, Calls: o.Calls}
	if o.Mode != "" {
		m := string(o.Mode)
		out.Mode = &m
	}
	return out
}

package command

import (
	"context"
	"fmt"
	"slices"

	"github.com/submissionmanager/submission-manager/adapters/console"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// consoleGateways shows the gateway protection's state in the console's own
// terms: adapters never import each other, so the wiring translates.
type consoleGateways struct{ op ports.GatewayOperator }

var (
	_ console.GatewayReporter   = consoleGateways{}
	_ console.GatewayController = consoleGateways{}
)

// Gateways lists each gateway URL the registry routes to, with its breaker
// and limits when this instance leads, and every stored pause.
func (g consoleGateways) Gateways(ctx context.Context) ([]console.GatewayState, error) {
	o, err := g.op.Gateways(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]console.GatewayState, 0, len(o.Gateways))
	for _, s := range o.Gateways {
		st := console.GatewayState{Name: s.GatewayURL, GatewayType: s.GatewayType, Paused: s.Paused}
		if e := s.Executor; e != nil {
			st.Breaker = string(e.Breaker)
			if e.Breaker == core.BreakerOpen {
				st.Reason = fmt.Sprintf("%d of the last %d calls failed; probe at %s", e.RecentFailures, e.RecentCalls, e.ProbeAt.Format("15:04:05"))
				st.UpdatedAt = e.ProbeAt
			}
			switch {
			case e.MaxInFlight > 0 && e.Rate > 0:
				st.Limit = fmt.Sprintf("%d in flight, %g/s (burst %d)", e.MaxInFlight, e.Rate, e.Burst)
			case e.MaxInFlight > 0:
				st.Limit = fmt.Sprintf("%d in flight", e.MaxInFlight)
			case e.Rate > 0:
				st.Limit = fmt.Sprintf("%g/s (burst %d)", e.Rate, e.Burst)
			}
		}
		for _, p := range o.Pauses {
			if p.GatewayURL == s.GatewayURL || p.GatewayType == s.GatewayType {
				st.UpdatedAt = p.PausedAt
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// PauseGateway pauses a gateway type when name is one, else the gateway URL
// name.
func (g consoleGateways) PauseGateway(ctx context.Context, name string) error {
	t, url := selector(name)
	_, err := g.op.PauseGateway(ctx, t, url)
	return err
}

// ResumeGateway resumes a gateway type or URL as PauseGateway names it.
func (g consoleGateways) ResumeGateway(ctx context.Context, name string) error {
	t, url := selector(name)
	_, err := g.op.ResumeGateway(ctx, t, url)
	return err
}

// selector reads a console gateway name as a type or a URL.
func selector(name string) (core.GatewayType, string) {
	if slices.Contains(core.GatewayTypes(), core.GatewayType(name)) {
		return core.GatewayType(name), ""
	}
	return "", name
}

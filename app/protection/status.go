package protection

import (
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// What the gates tell the executor's scheduler and the operators beyond a
// verdict: the room at a gateway for parked attempts, each breaker
// transition as a log line and a metric, and every gateway's state.

// Room returns how many parked attempts of the gateway may be released
// now: all of them when its breaker is open (they will be deferred), none
// while a probe is out, else the free slots under its max in flight (all
// when it has none).
func (g *Gates) Room(url string, parked int) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	v, ok := g.views[url]
	if !ok {
		return parked
	}
	if v.breaker != nil && v.breaker.State() == core.BreakerHalfOpen {
		return 0
	}
	if v.breaker != nil && v.breaker.State() == core.BreakerOpen {
		return parked
	}
	if v.limit.MaxInFlight > 0 {
		return max(0, min(parked, v.limit.MaxInFlight-v.inFlight))
	}
	return parked
}

// transition logs and counts a breaker transition.
func (g *Gates) transition(url string, tr *core.BreakerTransition) {
	if tr == nil {
		return
	}
	attrs := []any{"gateway_url", url, "from", tr.From, "to", tr.To}
	if tr.To == core.BreakerOpen {
		attrs = append(attrs, "probe_at", tr.ProbeAt)
	}
	if tr.Failures > 0 {
		attrs = append(attrs, "consecutive_failures", tr.Failures)
	}
	if tr.To == core.BreakerClosed {
		g.log.Info("gateway_breaker_transition", attrs...)
	} else {
		g.log.Warn("gateway_breaker_transition", attrs...)
	}
	if g.metrics != nil {
		g.metrics.BreakerTransition(url, tr.From, tr.To)
	}
}

// Status returns the gates' view of every gateway they have seen, by URL.
func (g *Gates) Status() []ports.GatewayStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]ports.GatewayStatus, 0, len(g.views))
	for url, v := range g.views {
		e := ports.GatewayExecution{
			InFlight: v.inFlight, MaxInFlight: v.limit.MaxInFlight, Rate: v.limit.Rate, Burst: v.limit.Burst,
			RecentCalls: v.recentN,
		}
		for i := range v.recentN {
			if v.recent[i] {
				e.RecentFailures++
			}
		}
		if v.breaker != nil {
			e.Breaker = v.breaker.State()
			if e.Breaker == core.BreakerOpen {
				e.ProbeAt = v.breaker.ProbeAt()
			}
		}
		out = append(out, ports.GatewayStatus{GatewayURL: url, GatewayType: v.gatewayType, Executor: &e})
	}
	return out
}

package ports

import "github.com/submissionmanager/submission-manager/core"

// ProtectionMetrics receives the gateway protection's events. It is separate
// from Metrics so existing implementations keep compiling; the executor uses
// it when its Metrics also implements it. Labels are gateway URLs, which are
// few (one per registry gateway).
type ProtectionMetrics interface {
	// BreakerTransition counts one change of a gateway's breaker state
	// and sets its state gauge to to.
	BreakerTransition(gatewayURL string, from, to core.BreakerState)
	// AttemptDeferred counts a due attempt that was not made because the
	// gateway's breaker was open, the gateway paused or it asked to wait
	// ("breaker_open", "paused", "retry_after"); no try was spent.
	AttemptDeferred(gatewayURL, reason string)
	// CallLimited counts a due attempt held back by a per-gateway limit
	// ("max_in_flight", "rate") or a half-open breaker's probe ("probing").
	CallLimited(gatewayURL, limit string)
	// GatewaysPaused reports how many gateways (types or URLs) are paused.
	GatewaysPaused(n int)
}

package ports

import (
	"context"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// GatewayStatus is what an operator sees of one gateway URL: the registry's
// targets routed to it, whether it is paused, and, from the executor when
// this instance leads, its breaker, calls in flight, limits and recent
// failure rate.
type GatewayStatus struct {
	GatewayURL  string
	GatewayType core.GatewayType
	// Targets are the registry's submission targets routed to this URL.
	Targets []string
	// Paused says a pause (of this URL or its type) is in force.
	Paused bool
	// Executor is set only when this instance leads and has seen the
	// gateway; the breaker's state lives in the leader's memory.
	Executor *GatewayExecution
}

// GatewayExecution is the leader's view of one gateway.
type GatewayExecution struct {
	// Breaker is empty when the breaker is turned off.
	Breaker core.BreakerState
	// ProbeAt is when an open breaker lets its probe through.
	ProbeAt  time.Time
	InFlight int
	// MaxInFlight, Rate and Burst are the gateway's limits (zero: none).
	MaxInFlight int
	Rate        float64
	Burst       int
	// RecentCalls and RecentFailures cover the latest calls (up to 100).
	RecentCalls, RecentFailures int
}

// GatewayOverview answers GET /v1/gateways.
type GatewayOverview struct {
	// Leader says whether this instance leads (and Executor views are
	// present).
	Leader   bool
	Gateways []GatewayStatus
	Pauses   []core.GatewayPause
}

// GatewayOperator is what the operator API offers about gateways. Pause and
// resume take exactly one of a gateway type and a gateway URL; they return a
// *core.FieldError naming the field for a bad selector, and
// core.ErrPausesUnavailable when the operator was built without a store of
// pauses.
type GatewayOperator interface {
	Gateways(ctx context.Context) (GatewayOverview, error)
	PauseGateway(ctx context.Context, t core.GatewayType, gatewayURL string) (core.GatewayPause, error)
	ResumeGateway(ctx context.Context, t core.GatewayType, gatewayURL string) (bool, error)
}

package command

import (
	"fmt"
	"log/slog"

	"github.com/submissionmanager/submission-manager/adapters/gateway"
	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/app/leader"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// execution is what a leading instance adds to the API: the executor, and
// the elector that runs it while this instance holds the lease.
type execution struct {
	executor *executor.Executor
	elector  *leader.Elector
}

// executorMetrics is the executor's metrics: the console's activity (which
// feeds Prometheus too) and Prometheus's gateway protection metrics, which
// the executor finds by their interface.
type executorMetrics struct {
	ports.Metrics
	ports.ProtectionMetrics
}

// newExecution builds the gateway clients (closed with the instance), the
// executor and the elector.
func (s *Server) newExecution(cfg ServeConfig, clock ports.Clock, metrics ports.Metrics, log *slog.Logger) (*execution, error) {
	gateways := make(map[core.GatewayType]ports.Gateway)
	for _, t := range core.GatewayTypes() {
		c, err := gateway.New(t, gateway.Config{Timeout: cfg.GatewayTimeout})
		if err != nil {
			return nil, fmt.Errorf("--gateway-timeout: %w", err)
		}
		s.gateways = append(s.gateways, c)
		gateways[t] = c
	}
	executor, err := executor.New(executor.Config{
		Store:           s.db.ExecutorStore(),
		Gateways:        gateways,
		Clock:           clock,
		Retry:           core.FixedDelay(cfg.RetryDelay),
		MaxInFlight:     cfg.MaxInFlight,
		ReserveAhead:    cfg.executorReserveAhead(),
		RefreshInterval: cfg.ScheduleRefreshInterval,
		// At shutdown, calls in flight may finish for as long as a call may
		// take, within half the drain budget (the other half is for writes
		// and HTTP).
		DrainTimeout: min(cfg.GatewayTimeout, cfg.ShutdownTimeout/2),
		Logger:       log,
		Metrics:      metrics,
		Tracer:       s.tracing.tracer,
		Protection:   cfg.Protection.executorProtection(cfg.RetryDelay, s.db.ExecutorStore()),
	})
	if err != nil {
		return nil, err
	}
	elector, err := leader.New(leader.Config{
		Leases:          s.db.Leases(),
		Clock:           clock,
		HolderID:        s.holderID,
		LeaseDuration:   cfg.LeaseDuration,
		RenewInterval:   cfg.RenewInterval,
		AcquireInterval: cfg.AcquireInterval,
		Logger:          log,
		Metrics:         metrics,
	})
	if err != nil {
		return nil, err
	}
	return &execution{executor: executor, elector: elector}, nil
}

package protection

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// GatewayServiceConfig wires a GatewayService.
type GatewayServiceConfig struct {
	// Targets returns the registry's contracts; required.
	Targets func() []core.Contract
	// Pauses stores the pauses; nil means the store keeps none, and pause
	// and resume answer core.ErrPausesUnavailable.
	Pauses ports.PauseStore
	// Executor is this instance's executor; nil on an API-only instance.
	Executor Executing
	// Logger receives pause and resume; nil means slog.Default().
	Logger *slog.Logger
}

// Executing is the executor as the operator's gateway view reads it.
type Executing interface {
	// GatewayStatus returns the current term's view of every gateway its
	// gates have seen (URL, type and Executor set), and false when this
	// instance does not lead.
	GatewayStatus() ([]ports.GatewayStatus, bool)
}

// GatewayService is the operator's view of the gateways and the pause
// switch. It runs on every instance: pauses go through the store, so the
// leader (whichever instance it is) sees them at its next refresh.
type GatewayService struct {
	cfg GatewayServiceConfig
	log *slog.Logger
}

var _ ports.GatewayOperator = (*GatewayService)(nil)

// NewGatewayService checks cfg.
func NewGatewayService(cfg GatewayServiceConfig) (*GatewayService, error) {
	if cfg.Targets == nil {
		return nil, errors.New("protection: GatewayServiceConfig.Targets is required")
	}
	return &GatewayService{cfg: cfg, log: cmp.Or(cfg.Logger, slog.Default())}, nil
}

// Gateways lists every gateway URL of the registry, and any other the
// executor still calls (intents keep the gatewayUrl of their snapshot),
// ordered by URL.
func (s *GatewayService) Gateways(ctx context.Context) (ports.GatewayOverview, error) {
	var out ports.GatewayOverview
	if s.cfg.Pauses != nil {
		ps, err := s.cfg.Pauses.ListPauses(ctx)
		if err != nil {
			return out, err
		}
		out.Pauses = ps
	}
	byURL := map[string]*ports.GatewayStatus{}
	for _, c := range s.cfg.Targets() {
		g, ok := byURL[c.GatewayURL]
		if !ok {
			g = &ports.GatewayStatus{GatewayURL: c.GatewayURL, GatewayType: c.GatewayType}
			byURL[c.GatewayURL] = g
		}
		g.Targets = append(g.Targets, c.SubmissionTarget)
	}
	if s.cfg.Executor != nil {
		views, leader := s.cfg.Executor.GatewayStatus()
		out.Leader = leader
		for _, v := range views {
			g, ok := byURL[v.GatewayURL]
			if !ok {
				g = &ports.GatewayStatus{GatewayURL: v.GatewayURL, GatewayType: v.GatewayType}
				byURL[v.GatewayURL] = g
			}
			g.Executor = v.Executor
		}
	}
	for _, g := range byURL {
		g.Paused = core.Paused(out.Pauses, g.GatewayURL, g.GatewayType)
		slices.Sort(g.Targets)
		out.Gateways = append(out.Gateways, *g)
	}
	slices.SortFunc(out.Gateways, func(a, b ports.GatewayStatus) int { return cmp.Compare(a.GatewayURL, b.GatewayURL) })
	return out, nil
}

// PauseGateway stores a pause of a gateway type or URL.
func (s *GatewayService) PauseGateway(ctx context.Context, t core.GatewayType, gatewayURL string) (core.GatewayPause, error) {
	if err := core.ValidateGatewaySelector(t, gatewayURL); err != nil {
		return core.GatewayPause{}, err
	}
	if s.cfg.Pauses == nil {
		return core.GatewayPause{}, core.ErrPausesUnavailable
	}
	p, err := s.cfg.Pauses.PauseGateway(ctx, core.GatewayPause{GatewayType: t, GatewayURL: gatewayURL})
	if err != nil {
		return p, err
	}
	s.log.Warn("gateway_paused", "gateway", p.Key(), "paused_at", p.PausedAt)
	return p, nil
}

// ResumeGateway removes a pause; resuming what is not paused is no error.
func (s *GatewayService) ResumeGateway(ctx context.Context, t core.GatewayType, gatewayURL string) (bool, error) {
	if err := core.ValidateGatewaySelector(t, gatewayURL); err != nil {
		return false, err
	}
	if s.cfg.Pauses == nil {
		return false, core.ErrPausesUnavailable
	}
	ok, err := s.cfg.Pauses.ResumeGateway(ctx, t, gatewayURL)
	if err != nil {
		return false, err
	}
	s.log.Info("gateway_resumed", "gateway", core.GatewayPause{GatewayType: t, GatewayURL: gatewayURL}.Key(), "was_paused", ok)
	return ok, nil
}

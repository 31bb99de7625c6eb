package httpapi

import (
	"context"

	"github.com/submissionmanager/submission-manager/adapters/httpapi/internal/apigen"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// ListGateways returns the operator's view of the gateways.
func (h *handlers) ListGateways(ctx context.Context, _ apigen.ListGatewaysRequestObject) (apigen.ListGatewaysResponseObject, error) {
	if h.gateways == nil {
		return nil, core.ErrPausesUnavailable
	}
	o, err := h.gateways.Gateways(ctx)
	if err != nil {
		return nil, err
	}
	out := apigen.GatewayList{Leader: o.Leader, Gateways: []apigen.Gateway{}, Pauses: []apigen.GatewayPause{}}
	for _, g := range o.Gateways {
		out.Gateways = append(out.Gateways, gatewayFromPort(g))
	}
	for _, p := range o.Pauses {
		out.Pauses = append(out.Pauses, pauseFromCore(p))
	}
	return apigen.ListGateways200JSONResponse(out), nil
}

// PauseGateway stores a pause of a gateway type or URL.
func (h *handlers) PauseGateway(ctx context.Context, req apigen.PauseGatewayRequestObject) (apigen.PauseGatewayResponseObject, error) {
	if req.Body == nil {
		return nil, errBodyRequired
	}
	if h.gateways == nil {
		return nil, core.ErrPausesUnavailable
	}
	t, url := selector(*req.Body)
	p, err := h.gateways.PauseGateway(ctx, t, url)
	if err != nil {
		return nil, err
	}
	return apigen.PauseGateway200JSONResponse(pauseFromCore(p)), nil
}

// ResumeGateway lifts a pause of a gateway type or URL.
func (h *handlers) ResumeGateway(ctx context.Context, req apigen.ResumeGatewayRequestObject) (apigen.ResumeGatewayResponseObject, error) {
	if req.Body == nil {
		return nil, errBodyRequired
	}
	if h.gateways == nil {
		return nil, core.ErrPausesUnavailable
	}
	t, url := selector(*req.Body)
	was, err := h.gateways.ResumeGateway(ctx, t, url)
	if err != nil {
		return nil, err
	}
	return apigen.ResumeGateway200JSONResponse{WasPaused: was}, nil
}

func selector(s apigen.GatewaySelector) (core.GatewayType, string) {
	var t core.GatewayType
	if s.GatewayType != nil {
		t = core.GatewayType(*s.GatewayType)
	}
	url := ""
	if s.GatewayUrl != nil {
		url = *s.GatewayUrl
	}
	return t, url
}

func pauseFromCore(p core.GatewayPause) apigen.GatewayPause {
	out := apigen.GatewayPause{PausedAt: p.PausedAt}
	if p.GatewayType != "" {
		t := apigen.GatewayType(p.GatewayType)
		out.GatewayType = &t
	}
	if p.GatewayURL != "" {
		out.GatewayUrl = &p.GatewayURL
	}
	return out
}

func gatewayFromPort(g ports.GatewayStatus) apigen.Gateway {
	out := apigen.Gateway{
		GatewayUrl: g.GatewayURL, GatewayType: apigen.GatewayType(g.GatewayType),
		Targets: g.Targets, Paused: g.Paused,
	}
	if out.Targets == nil {
		out.Targets = []string{}
	}
	if e := g.Executor; e != nil {
		x := apigen.GatewayExecution{InFlight: e.InFlight, RecentCalls: e.RecentCalls, RecentFailures: e.RecentFailures}
		if e.Breaker != "" {
			b := apigen.GatewayExecutionBreaker(e.Breaker)
			x.Breaker = &b
		}
		if !e.ProbeAt.IsZero() {
			x.ProbeAt = &e.ProbeAt
		}
		if e.MaxInFlight > 0 {
			x.MaxInFlight = &e.MaxInFlight
		}
		if e.Rate > 0 {
			x.Rate, x.Burst = &e.Rate, &e.Burst
		}
		out.Executor = &x
	}
	return out
}

package gateway

import (
	"context"
	"fmt"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Router is the one ports.Gateway the engine needs: it hands each attempt to
// the Client of the attempt's gateway type, so every type reads answers by
// its own rules and keeps its own bounded pool.
type Router struct {
	clients map[core.GatewayType]*Client
}

var _ ports.Gateway = (*Router)(nil)

// NewRouter builds a Client for every known gateway type with the same
// Config.
func NewRouter(cfg Config) (*Router, error) {
	r := &Router{clients: make(map[core.GatewayType]*Client)}
	for _, t := range core.GatewayTypes() {
		c, err := New(t, cfg)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.clients[t] = c
	}
	return r, nil
}

// Submit routes the attempt by its gateway type.
func (r *Router) Submit(ctx context.Context, p ports.SubmitParams) (core.Outcome, error) {
	c, ok := r.clients[p.GatewayType]
	if !ok {
		return core.Outcome{}, &Error{Kind: KindNotSent, GatewayType: p.GatewayType,
			msg: fmt.Sprintf("gateway call not sent: no client for gateway type %q", p.GatewayType)}
	}
	return c.Submit(ctx, p)
}

// Close releases every Client's idle connections.
func (r *Router) Close() {
	for _, c := range r.clients {
		c.Close()
	}
}

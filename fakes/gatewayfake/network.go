package gatewayfake

import (
	"context"
	"slices"
	"sync"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Network stands for the network between a caller and several gateways: a
// ports.Gateway that hands each call to the gateway answering at the
// params' gatewayUrl, so a test sees that a call went where its params say.
// It is safe for concurrent use.
type Network struct {
	mu       sync.Mutex
	gateways []*Gateway
}

var _ ports.Gateway = (*Network)(nil)

// NewNetwork returns a network of gateways.
func NewNetwork(gateways ...*Gateway) *Network {
	return &Network{gateways: slices.Clone(gateways)}
}

// Add connects g to the network.
func (n *Network) Add(g *Gateway) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.gateways = append(n.gateways, g)
}

// Remove disconnects g: its URLs answer no more.
func (n *Network) Remove(g *Gateway) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.gateways = slices.DeleteFunc(n.gateways, func(x *Gateway) bool { return x == g })
}

// Submit calls the gateway that answers at p.GatewayURL; when none does,
// the call finds nothing there, and no gateway can have received it.
func (n *Network) Submit(ctx context.Context, p ports.SubmitParams) (core.Outcome, error) {
	n.mu.Lock()
	i := slices.IndexFunc(n.gateways, func(g *Gateway) bool { return g.serves(p.GatewayURL) })
	var g *Gateway
	if i >= 0 {
		g = n.gateways[i]
	}
	n.mu.Unlock()
	if g == nil {
		return core.Outcome{}, unanswered(ctx, p.GatewayURL)
	}
	return g.Submit(ctx, p)
}

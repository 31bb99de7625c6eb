package gatewayfake

import "slices"

// Calls returns every call the gateway received, in arrival order.
func (g *Gateway) Calls() []Call {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.calls)
}

// CallsFor returns the calls for one reference, in arrival order.
func (g *Gateway) CallsFor(ref string) []Call {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []Call
	for _, c := range g.calls {
		if c.Params.Reference == ref {
			out = append(out, c)
		}
	}
	return out
}

// References lists the reference of every call, in arrival order.
func (g *Gateway) References() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, len(g.calls))
	for i, c := range g.calls {
		out[i] = c.Params.Reference
	}
	return out
}

// CallCount is the number of calls the gateway received.
func (g *Gateway) CallCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.calls)
}

// MaxConcurrent is the most calls that were ever under way at once.
func (g *Gateway) MaxConcurrent() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.maxActive
}

// Received says what the gateway saw of ref.
func (g *Gateway) Received(ref string) Received {
	g.mu.Lock()
	defer g.mu.Unlock()
	r, ok := g.received[ref]
	if !ok {
		return Received{}
	}
	out := *r
	out.LastPayload = slices.Clone(r.LastPayload)
	return out
}

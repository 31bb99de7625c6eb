package gateway

import "net"

// IdleConns returns the pooled idle connections to addr (host:port), oldest
// first. It exists for tests only (this file is compiled with them alone):
// a test that closes a connection from the gateway's side waits on the
// client's end of it for the close to arrive, instead of sleeping.
func IdleConns(c *Client, addr string) []net.Conn {
	p := c.conns
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.hosts[hostPort(addr)]
	if h == nil {
		return nil
	}
	out := make([]net.Conn, len(h.idle))
	for i, ic := range h.idle {
		out[i] = ic.nc
	}
	return out
}

package access

import (
	"net"
	"net/netip"
	"strings"

	"github.com/submissionmanager/submission-manager/ports"
)

// clientOf names the client address a throttle counts failures against.
// It is the connection's peer, unless the peer is a trusted proxy: then it
// is the rightmost X-Forwarded-For hop that is not a trusted proxy (each
// proxy appends the address it saw, so only hops to the right of the first
// untrusted one were written by proxies we trust; anything further left
// was written by the client and proves nothing). An IPv6 client counts by
// its /64, the block one subscriber usually holds, so that walking
// through its addresses gains nothing.
func (t *Throttle) clientOf(c ports.AuthClient) string {
	peer, ok := parseHost(c.Peer)
	if !ok {
		return c.Peer // not an IP peer (a Unix socket): one client
	}
	client := peer
	if t.trusted(peer) {
	hops:
		for i := len(c.ForwardedFor) - 1; i >= 0; i-- {
			parts := strings.Split(c.ForwardedFor[i], ",")
			for j := len(parts) - 1; j >= 0; j-- {
				hop, ok := parseHost(strings.TrimSpace(parts[j]))
				if !ok {
					break hops // a malformed hop: keep the last proxy's word
				}
				client = hop
				if !t.trusted(hop) {
					break hops
				}
			}
		}
	}
	return key(client)
}

func (t *Throttle) trusted(a netip.Addr) bool {
	for _, p := range t.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseHost reads an address with or without a port.
func parseHost(s string) (netip.Addr, bool) {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// key is the throttle's name for an address.
func key(a netip.Addr) string {
	if a.Is6() {
		p, _ := a.Prefix(64) // a valid IPv6 address always has a /64
		return p.String()
	}
	return a.String()
}

package ports

import "time"

// The surfaces a key is presented on, as AuthClient.Surface.
const (
	SurfaceAPI     = "api"
	SurfaceConsole = "console"
)

// AuthClient is whoever presents a key, as an HTTP adapter sees it: the
// surface, the connection's peer address (host:port) and the
// X-Forwarded-For values the request carries. Which address is the client
// is the throttle's to decide (only trusted proxies may name another one).
type AuthClient struct {
	Surface      string
	Peer         string
	ForwardedFor []string
}

// AuthThrottle refuses, for a while, client addresses that presented too
// many unknown keys, so that keys cannot be guessed at the speed of the
// network. Adapters ask Admit before they look at a key, and report each
// unknown key with Failed.
type AuthThrottle interface {
	// Admit returns zero when the client may present a key now, else how
	// long it must wait (the request is refused without looking at its
	// key).
	Admit(c AuthClient) (retryAfter time.Duration)
	// Failed counts an unknown key from the client and returns how long
	// it must now wait before its next one (zero while it may go on).
	Failed(c AuthClient) (retryAfter time.Duration)
}

// AuthMetrics receives the throttle's events, by surface.
type AuthMetrics interface {
	// AuthFailed counts a presented key that is not configured.
	AuthFailed(surface string)
	// AuthThrottled counts a request refused because its client address
	// presented too many unknown keys.
	AuthThrottled(surface string)
}

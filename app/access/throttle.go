// Package access throttles failed authentication: it tells the HTTP API and
// the console, which check keys (core.KeySet), whether a client address may
// present a key now, and counts the unknown keys each address presented. The
// arithmetic is core.AuthThrottle's; this package adds the clock, the lock,
// the client address (trusted proxies) and the log and metric events.
package access

import (
	"cmp"
	"errors"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Config configures a Throttle.
type Config struct {
	// Policy is how many unknown keys an address may present; a zero
	// Burst throttles nothing.
	Policy core.AuthThrottlePolicy
	// MaxClients bounds the addresses tracked; zero means
	// core.DefaultAuthThrottleClients.
	MaxClients int
	// TrustedProxies are the networks of proxies (HAProxy with option
	// forwardfor) whose X-Forwarded-For names the client. Requests from
	// any other peer are that peer's, whatever they claim.
	TrustedProxies []netip.Prefix
	// Clock dates failures. Required.
	Clock ports.Clock
	// Metrics counts failures and refusals; nil counts nothing.
	Metrics ports.AuthMetrics
	// Logger receives auth_failed (debug) and auth_throttled (warn).
	Logger *slog.Logger
}

// Throttle is the one throttle of an instance, shared by the API and the
// console, so that guesses on one surface count against the other.
type Throttle struct {
	cfg Config
	log *slog.Logger

	mu sync.Mutex
	t  *core.AuthThrottle
}

var _ ports.AuthThrottle = (*Throttle)(nil)

// New validates cfg and returns an empty throttle.
func New(cfg Config) (*Throttle, error) {
	if cfg.Clock == nil {
		return nil, errors.New("access: Config.Clock is required")
	}
	if err := cfg.Policy.Validate(); err != nil {
		return nil, err
	}
	return &Throttle{cfg: cfg, log: cmp.Or(cfg.Logger, slog.Default()),
		t: core.NewAuthThrottle(cfg.Policy, cfg.MaxClients)}, nil
}

// Admit implements ports.AuthThrottle.
func (t *Throttle) Admit(c ports.AuthClient) time.Duration {
	if t.cfg.Policy.Off() {
		return 0
	}
	client := t.clientOf(c)
	now := t.cfg.Clock.Now()
	t.mu.Lock()
	wait := t.t.RetryAfter(client, now)
	t.mu.Unlock()
	if wait > 0 && t.cfg.Metrics != nil {
		t.cfg.Metrics.AuthThrottled(c.Surface)
	}
	return wait
}

// Failed implements ports.AuthThrottle.
func (t *Throttle) Failed(c ports.AuthClient) time.Duration {
	if t.cfg.Metrics != nil {
		t.cfg.Metrics.AuthFailed(c.Surface)
	}
	client := t.clientOf(c)
	t.log.Debug("auth_failed", "surface", c.Surface, "client", client)
	if t.cfg.Policy.Off() {
		return 0
	}
	now := t.cfg.Clock.Now()
	t.mu.Lock()
	wait, throttled := t.t.Fail(client, now)
	t.mu.Unlock()
	if throttled {
		t.log.Warn("auth_throttled", "surface", c.Surface, "client", client,
			"failures", t.cfg.Policy.Burst, "retry_after", wait)
	}
	return wait
}

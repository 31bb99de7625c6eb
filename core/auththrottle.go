package core

import (
	"fmt"
	"time"
)

// Defaults of AuthThrottlePolicy: ten unknown keys at once, then one more
// every six seconds (ten a minute). A person who mistypes a key a few times
// never meets it; a guesser gets 14,400 guesses a day per address and
// instance, nothing against a key of 128 random bits.
const (
	DefaultAuthFailureBurst    = 10
	DefaultAuthFailureInterval = 6 * time.Second
	// DefaultAuthThrottleClients bounds the client addresses a throttle
	// tracks (about 100 bytes each).
	DefaultAuthThrottleClients = 65536
)

// AuthThrottlePolicy is how many unknown keys a client address may present:
// Burst at once, then one more per Interval. It is a leaky bucket of
// failures: each unknown key adds one, and the level drains by one per
// Interval. While another failure would overflow it, the address may not
// present a key at all, right or wrong, or a guesser would learn from the
// answer. A zero Burst turns the throttle off.
type AuthThrottlePolicy struct {
	Burst    int
	Interval time.Duration
}

// Validate names what is wrong with the policy, by its flag.
func (p AuthThrottlePolicy) Validate() error {
	if p.Burst < 0 {
		return fmt.Errorf("--auth-failure-burst must be 0 (off) or more, got %d", p.Burst)
	}
	if p.Burst > 0 && p.Interval <= 0 {
		return fmt.Errorf("--auth-failure-interval must be positive, got %s", p.Interval)
	}
	return nil
}

// Off reports whether the policy throttles nothing.
func (p AuthThrottlePolicy) Off() bool { return p.Burst == 0 }

// AuthFailures is one client address's recent failures: the bucket's level
// when it was last changed.
type AuthFailures struct {
	level float64
	at    time.Time
}

// Level returns how many failures still count at now.
func (p AuthThrottlePolicy) Level(f AuthFailures, now time.Time) float64 {
	if f.level == 0 || p.Off() {
		return 0
	}
	drained := float64(now.Sub(f.at)) / float64(p.Interval)
	return max(0, f.level-max(0, drained))
}

// RetryAfter returns how long the client must wait before it may present a
// key again: zero while one more failure would still fit in the bucket.
func (p AuthThrottlePolicy) RetryAfter(f AuthFailures, now time.Time) time.Duration {
	over := p.Level(f, now) - float64(p.Burst-1)
	if p.Off() || over <= 0 {
		return 0
	}
	return time.Duration(over * float64(p.Interval))
}

// Fail counts one more failure at now.
func (p AuthThrottlePolicy) Fail(f AuthFailures, now time.Time) AuthFailures {
	return AuthFailures{level: p.Level(f, now) + 1, at: now}
}

// AuthThrottle applies a policy to many client addresses, tracking at most a
// bounded number of them so that a flood of addresses cannot grow it
// without end. When the table is full it forgets the addresses whose
// failures have drained; addresses it still cannot track share one
// allowance, so spreading guesses over more addresses than it holds gains
// nothing. It is pure (time passed in) and not safe for concurrent use.
type AuthThrottle struct {
	policy    AuthThrottlePolicy
	max       int
	clients   map[string]AuthFailures
	overflow  AuthFailures
	lastSweep time.Time
}

// NewAuthThrottle returns an empty throttle of at most maxClients addresses
// (DefaultAuthThrottleClients when not positive).
func NewAuthThrottle(p AuthThrottlePolicy, maxClients int) *AuthThrottle {
	if maxClients <= 0 {
		maxClients = DefaultAuthThrottleClients
	}
	return &AuthThrottle{policy: p, max: maxClients, clients: map[string]AuthFailures{}}
}

// RetryAfter returns how long client must wait before presenting a key.
func (t *AuthThrottle) RetryAfter(client string, now time.Time) time.Duration {
	if f, ok := t.clients[client]; ok {
		return t.policy.RetryAfter(f, now)
	}
	if len(t.clients) >= t.max {
		return t.policy.RetryAfter(t.overflow, now)
	}
	return 0
}

// Fail counts an unknown key from client at now and returns how long the
// client must now wait, and whether this failure is the one that made it
// wait (for a single log line per throttled spell).
func (t *AuthThrottle) Fail(client string, now time.Time) (retryAfter time.Duration, throttled bool) {
	if t.policy.Off() {
		return 0, false
	}
	f, ok := t.clients[client]
	if !ok && len(t.clients) >= t.max {
		t.sweep(now)
	}
	var next AuthFailures
	if ok || len(t.clients) < t.max {
		next = t.policy.Fail(f, now)
		t.clients[client] = next
	} else {
		f = t.overflow
		next = t.policy.Fail(f, now)
		t.overflow = next
	}
	wait := t.policy.RetryAfter(next, now)
	return wait, wait > 0 && t.policy.RetryAfter(f, now) == 0
}

// sweep forgets the addresses whose failures have drained, at most once
// per Interval, so that a full table of busy addresses is not walked on
// every failure.
func (t *AuthThrottle) sweep(now time.Time) {
	if !t.lastSweep.IsZero() && now.Sub(t.lastSweep) < t.policy.Interval {
		return
	}
	t.lastSweep = now
	for c, f := range t.clients {
		if t.policy.Level(f, now) == 0 {
			delete(t.clients, c)
		}
	}
}

// Tracked returns how many addresses the throttle holds.
func (t *AuthThrottle) Tracked() int { return len(t.clients) }

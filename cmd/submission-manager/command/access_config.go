package command

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/console"
	"github.com/submissionmanager/submission-manager/app/access"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// AccessConfig is who may reach the API and the console, beyond the keys
// themselves: how long a console sign-in lasts, how many unknown keys a
// client address may present, and which proxies may say who the client
// is. See docs/operations.md, "Keys, sessions and throttling".
type AccessConfig struct {
	// SessionTTL is how long a console sign-in lasts, and the most any
	// session cookie may claim.
	SessionTTL time.Duration
	// Throttle is the --auth-failure-* policy; a zero Burst is off.
	Throttle core.AuthThrottlePolicy
	// TrustedProxies are the proxies whose X-Forwarded-For names the
	// client address the throttle counts.
	TrustedProxies []netip.Prefix
}

// DefaultAccessConfig: eight-hour sign-ins, ten unknown keys then one per
// six seconds, and no trusted proxy (the peer is the client).
func DefaultAccessConfig() AccessConfig {
	return AccessConfig{
		SessionTTL: console.DefaultSessionTTL,
		Throttle:   core.AuthThrottlePolicy{Burst: core.DefaultAuthFailureBurst, Interval: core.DefaultAuthFailureInterval},
	}
}

// addAccessFlags registers the access flags on fs over c.
func addAccessFlags(fs *flag.FlagSet, c *AccessConfig) {
	fs.DurationVar(&c.SessionTTL, "console-session-ttl", c.SessionTTL, "how long a console sign-in lasts; no session cookie may claim longer")
	fs.IntVar(&c.Throttle.Burst, "auth-failure-burst", c.Throttle.Burst,
		"unknown keys a client address may present at once (API and console sign-in together) before it must wait; 0 turns the throttle off")
	fs.DurationVar(&c.Throttle.Interval, "auth-failure-interval", c.Throttle.Interval, "after the burst, one more unknown key per this interval")
	fs.Var(&prefixesFlag{prefixes: &c.TrustedProxies}, "trusted-proxies",
		"comma-separated addresses or CIDRs of proxies (HAProxy with option forwardfor) whose X-Forwarded-For names the client; none by default")
}

// Validate checks the access settings; every message names its flag.
func (c AccessConfig) Validate() error {
	var errs []error
	if c.SessionTTL < time.Minute {
		errs = append(errs, fmt.Errorf("--console-session-ttl must be at least 1m, got %s", c.SessionTTL))
	}
	if err := c.Throttle.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// newAuthThrottle builds the instance's one throttle, shared by the API and
// the console so that guesses on either count against the same address.
func newAuthThrottle(c AccessConfig, clock ports.Clock, metrics ports.AuthMetrics, log *slog.Logger) (*access.Throttle, error) {
	return access.New(access.Config{Policy: c.Throttle, TrustedProxies: c.TrustedProxies,
		Clock: clock, Metrics: metrics, Logger: log})
}

// warnWeakKeys logs a weak_key warning for every key that cannot carry
// core.MinKeyBits of randomness, naming its kind and place in its list,
// never the key. It does not refuse them: the operator may have reasons,
// but should know.
func warnWeakKeys(cfg ServeConfig, log *slog.Logger) {
	for _, list := range []struct {
		flag string
		keys []string
	}{{"api-keys", cfg.APIKeys}, {"operator-keys", cfg.OperatorKeys}} {
		for i, key := range list.keys {
			if bits := core.KeyBits(key); bits < core.MinKeyBits {
				log.Warn("weak_key", "flag", "--"+list.flag, "position", i+1, "estimated_bits", int(bits),
					"advice", fmt.Sprintf("use %d random bits or more, e.g. openssl rand -hex 32", core.MinKeyBits))
			}
		}
	}
}

// prefixesFlag is a comma-separated list of addresses and CIDR prefixes; a
// bare address is a prefix of its full length.
type prefixesFlag struct{ prefixes *[]netip.Prefix }

func (p *prefixesFlag) String() string {
	if p.prefixes == nil {
		return ""
	}
	out := make([]string, len(*p.prefixes))
	for i, x := range *p.prefixes {
		out[i] = x.String()
	}
	return strings.Join(out, ",")
}

func (p *prefixesFlag) Set(s string) error {
	var out []netip.Prefix
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if pfx, err := netip.ParsePrefix(item); err == nil {
			out = append(out, pfx.Masked())
			continue
		}
		addr, err := netip.ParseAddr(item)
		if err != nil {
			return fmt.Errorf("%q is neither an address nor a CIDR prefix", item)
		}
		out = append(out, netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen()))
	}
	*p.prefixes = out
	return nil
}

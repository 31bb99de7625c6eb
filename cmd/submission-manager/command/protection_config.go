package command

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/app/protection"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// ProtectionConfig is the operator's gateway protection: retry policies per
// gateway type and mode, the circuit breaker (on by default) and the
// per-gateway limits. See docs/operations.md, "Gateway protection".
type ProtectionConfig struct {
	// Retry holds the --retry rules in order; a later rule for the same key
	// wins. Without a rule for a key, --retry-delay applies.
	Retry []core.RetryRule
	// Breaker turns the per-gateway circuit breaker on.
	Breaker bool
	// BreakerSettings are the --breaker-* values.
	BreakerSettings core.BreakerConfig
	// BreakerFailureReasons are rejection reasons counted as gateway failures.
	BreakerFailureReasons []string
	// Limits are the --gateway-limit rules.
	Limits []protection.GatewayLimit
	// MaxRetryAfter bounds the wait a busy gateway asks for with
	// Retry-After (--gateway-max-retry-after).
	MaxRetryAfter time.Duration
}

// DefaultProtectionConfig has the breaker on with its defaults, no retry
// rule beyond --retry-delay, and no limit.
func DefaultProtectionConfig() ProtectionConfig {
	return ProtectionConfig{Breaker: true, BreakerSettings: core.DefaultBreakerConfig(), MaxRetryAfter: protection.DefaultMaxRetryAfter}
}

// addProtectionFlags registers the protection flags on fs over c.
func addProtectionFlags(fs *flag.FlagSet, c *ProtectionConfig) {
	random := core.NewRandom(rand.Uint64())
	fs.Var(&retryFlag{rules: &c.Retry, random: random}, "retry",
		"retry policy per gateway type[.mode], repeatable or ';'-separated: sms=exponential:base=1s,max=60s,jitter=full, push.batch=fixed:delay=10s, default=...")
	fs.BoolVar(&c.Breaker, "breaker", c.Breaker, "per-gateway circuit breaker: defer attempts while a gateway is down instead of spending tries (--breaker=false turns it off)")
	fs.IntVar(&c.BreakerSettings.Threshold, "breaker-threshold", c.BreakerSettings.Threshold, "consecutive gateway failures that open a gateway's breaker")
	fs.DurationVar(&c.BreakerSettings.Window, "breaker-window", c.BreakerSettings.Window, "the failures that open the breaker must fall within this window")
	fs.DurationVar(&c.BreakerSettings.OpenFor, "breaker-open", c.BreakerSettings.OpenFor, "how long an opened breaker waits before its one probe call")
	fs.DurationVar(&c.BreakerSettings.MaxOpenFor, "breaker-max-open", c.BreakerSettings.MaxOpenFor, "bound on the open interval, which doubles after each failed probe")
	fs.Var((*listFlag)(&c.BreakerFailureReasons), "breaker-failure-reasons", "comma-separated rejection reasons the breaker counts as gateway failures (e.g. provider_failure); none by default")
	fs.Var(&limitFlag{limits: &c.Limits}, "gateway-limit",
		"per-gateway limit by URL or type, repeatable or ';'-separated: sms=max-in-flight=8,rate=100,burst=20")
	fs.DurationVar(&c.MaxRetryAfter, "gateway-max-retry-after", c.MaxRetryAfter,
		"bound on the wait a busy gateway asks for (429 or 503 with Retry-After), which spends no try")
}

// Validate checks the protection settings; every message names its flag.
func (c ProtectionConfig) Validate() error {
	var errs []error
	if c.Breaker {
		b := c.BreakerSettings
		if b.Threshold < 1 {
			errs = append(errs, fmt.Errorf("--breaker-threshold must be at least 1, got %d", b.Threshold))
		}
		for _, d := range []struct {
			flag string
			v    time.Duration
		}{{"breaker-window", b.Window}, {"breaker-open", b.OpenFor}, {"breaker-max-open", b.MaxOpenFor}} {
			if d.v <= 0 {
				errs = append(errs, fmt.Errorf("--%s must be positive, got %s", d.flag, d.v))
			}
		}
		if b.OpenFor > 0 && b.MaxOpenFor < b.OpenFor {
			errs = append(errs, fmt.Errorf("--breaker-max-open (%s) must not be below --breaker-open (%s)", b.MaxOpenFor, b.OpenFor))
		}
	}
	for _, r := range c.BreakerFailureReasons {
		known := false
		for _, t := range core.GatewayTypes() {
			known = known || t.KnowsReason(r)
		}
		if !known {
			errs = append(errs, fmt.Errorf("--breaker-failure-reasons: %q is not a rejection reason of any gateway type", r))
		}
	}
	if c.MaxRetryAfter <= 0 {
		errs = append(errs, fmt.Errorf("--gateway-max-retry-after must be positive, got %s", c.MaxRetryAfter))
	}
	if err := (protection.Config{Limits: c.Limits}).Validate(); err != nil {
		errs = append(errs, fmt.Errorf("--gateway-limit: %w", err))
	}
	return errors.Join(errs...)
}

// executorProtection is the executor's view of the settings; retryDelay is
// the default policy for intents no --retry rule names.
func (c ProtectionConfig) executorProtection(retryDelay time.Duration, pauses ports.PauseStore) protection.Config {
	rules := append([]core.RetryRule{{Policy: core.FixedDelay(retryDelay)}}, c.Retry...)
	table := core.NewRetryTable(rules...)
	p := protection.Config{Retry: &table, FailureReasons: c.BreakerFailureReasons, Limits: c.Limits, Pauses: pauses,
		MaxRetryAfter: c.MaxRetryAfter}
	if c.Breaker {
		b := c.BreakerSettings
		p.Breaker = &b
	}
	return p
}

// retryFlag collects --retry rules; one value may hold several separated by
// ';' (the environment variable's form).
type retryFlag struct {
	rules  *[]core.RetryRule
	random core.Random
}

func (f *retryFlag) String() string {
	if f.rules == nil {
		return ""
	}
	var parts []string
	for _, r := range *f.rules {
		parts = append(parts, r.Key.String()+"="+fmt.Sprint(r.Policy))
	}
	return strings.Join(parts, ";")
}

func (f *retryFlag) Set(s string) error {
	for part := range strings.SplitSeq(s, ";") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		r, err := core.ParseRetryRule(part, f.random)
		if err != nil {
			return err
		}
		*f.rules = append(*f.rules, r)
	}
	return nil
}

// limitFlag collects --gateway-limit rules: KEY=max-in-flight=N,rate=R,burst=B
// where KEY is a gateway type or a gateway URL.
type limitFlag struct{ limits *[]protection.GatewayLimit }

func (f *limitFlag) String() string {
	if f.limits == nil {
		return ""
	}
	var parts []string
	for _, l := range *f.limits {
		parts = append(parts, l.String())
	}
	return strings.Join(parts, ";")
}

func (f *limitFlag) Set(s string) error {
	for part := range strings.SplitSeq(s, ";") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		l, err := parseGatewayLimit(strings.TrimSpace(part))
		if err != nil {
			return err
		}
		*f.limits = append(*f.limits, l)
	}
	return nil
}

// parseGatewayLimit reads one rule. A key with "://" is a gateway URL, else
// a gateway type. A rate without a burst gets a burst of max(1, rate).
func parseGatewayLimit(s string) (protection.GatewayLimit, error) {
	i := strings.Index(s, "=")
	if strings.Contains(s, "://") {
		// The URL ends at the first '=' after its scheme.
		j := strings.Index(s[strings.Index(s, "://")+3:], "=")
		i = -1
		if j >= 0 {
			i = strings.Index(s, "://") + 3 + j
		}
	}
	if i <= 0 {
		return protection.GatewayLimit{}, fmt.Errorf("gateway limit %q: want KEY=max-in-flight=N,rate=R,burst=B with KEY a gateway type or URL", s)
	}
	key, params := s[:i], s[i+1:]
	var l protection.GatewayLimit
	if strings.Contains(key, "://") {
		l.GatewayURL = key
	} else {
		l.GatewayType = core.GatewayType(key)
		if !l.GatewayType.Known() {
			return l, fmt.Errorf("gateway limit %q: %q is neither a gateway type (sms, push) nor a URL", s, key)
		}
	}
	for p := range strings.SplitSeq(params, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok {
			return l, fmt.Errorf("gateway limit %q: parameter %q: want name=value", s, p)
		}
		var err error
		switch k {
		case "max-in-flight":
			l.MaxInFlight, err = strconv.Atoi(v)
		case "rate":
			l.Rate, err = strconv.ParseFloat(v, 64)
		case "burst":
			l.Burst, err = strconv.Atoi(v)
		default:
			return l, fmt.Errorf("gateway limit %q: unknown parameter %q (want max-in-flight, rate, burst)", s, k)
		}
		if err != nil {
			return l, fmt.Errorf("gateway limit %q: %s %q is not a number", s, k, v)
		}
	}
	if l.Rate > 0 && l.Burst == 0 {
		l.Burst = max(1, int(l.Rate))
	}
	return l, nil
}

// Package protection is the gateway protection around the executor's calls:
// the operator's retry policies, a circuit breaker per gateway URL, limits
// on calls in flight and on their rate, and pauses. Its Gates hold one
// leadership term's state in memory and answer, for each due attempt,
// whether it may call its gateway now; its GatewayService is the operator's
// view of the gateways and the pause switch, on every instance. None of it
// is a contract term: it only decides when a call is made, never what an
// answer means.
package protection

import (
	"errors"
	"fmt"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Config is the operator's gateway protection: retry policies per
// gateway type and mode, the circuit breaker, and per-gateway limits. None
// of it is a contract term or shows in an intent: it only decides when the
// executor calls a gateway. The zero value protects nothing (today's
// behaviour); the service turns the breaker on by default.
type Config struct {
	// Retry, when set, chooses the retry policy by the intent's gateway
	// type and mode and replaces the executor's single retry policy.
	Retry *core.RetryTable
	// Breaker, when set, gives every gateway URL a circuit breaker.
	Breaker *core.BreakerConfig
	// FailureReasons are rejection reasons the breaker counts as gateway
	// failures besides errors (e.g. provider_failure); none by default.
	FailureReasons []string
	// Limits bound calls per gateway: a rule naming a URL wins over one
	// naming the gateway type.
	Limits []GatewayLimit
	// Pauses, when set, is where the operator's gateway pauses are
	// stored; the leader reads them at the start of its term and at every
	// schedule refresh.
	Pauses ports.PauseStore
	// PauseRecheck is how far a paused gateway's due attempts are deferred
	// before the executor looks again; zero means DefaultPauseRecheck.
	PauseRecheck time.Duration
	// MaxRetryAfter bounds the wait a busy gateway may ask for with
	// Retry-After (ports.GatewayBusy); zero means DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
}

// DefaultPauseRecheck is how long an attempt for a paused gateway waits
// before it is looked at again: short enough that a resume takes effect
// within seconds, long enough that a paused backlog costs few writes.
const DefaultPauseRecheck = 5 * time.Second

// DefaultMaxRetryAfter bounds a busy gateway's Retry-After unless the
// operator sets another bound: a gateway asking for an hour must not stall
// its intents that long on its word alone.
const DefaultMaxRetryAfter = time.Minute

// GatewayLimit bounds the calls to one gateway URL, or to every URL of one
// gateway type. Work over a limit waits in the leader's schedule: it is
// neither dropped nor spent.
type GatewayLimit struct {
	// Exactly one of GatewayURL and GatewayType is set.
	GatewayURL  string
	GatewayType core.GatewayType
	// MaxInFlight bounds concurrent calls; zero means no bound beyond the
	// executor's own MaxInFlight.
	MaxInFlight int
	// Rate is calls per second with Burst; zero Rate means no rate limit.
	Rate  float64
	Burst int
}

// String renders the limit in the operator syntax of --gateway-limit.
func (l GatewayLimit) String() string {
	key := l.GatewayURL
	if key == "" {
		key = string(l.GatewayType)
	}
	return fmt.Sprintf("%s=max-in-flight:%d,rate:%g,burst:%d", key, l.MaxInFlight, l.Rate, l.Burst)
}

// Validate reports every problem of the protection settings at once.
func (p Config) Validate() error {
	var errs []error
	if p.Breaker != nil {
		if err := p.Breaker.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if p.PauseRecheck < 0 {
		errs = append(errs, fmt.Errorf("pause recheck must not be negative, got %s", p.PauseRecheck))
	}
	if p.MaxRetryAfter < 0 {
		errs = append(errs, fmt.Errorf("max retry-after must not be negative, got %s", p.MaxRetryAfter))
	}
	seen := map[string]bool{}
	for i, l := range p.Limits {
		key := l.GatewayURL + string(l.GatewayType)
		switch {
		case (l.GatewayURL == "") == (l.GatewayType == ""):
			errs = append(errs, fmt.Errorf("gateway limit %d names exactly one of a gateway URL and a gateway type", i))
		case l.GatewayType != "" && !l.GatewayType.Known():
			errs = append(errs, fmt.Errorf("gateway limit %d: gateway type %q is not one of sms, push", i, l.GatewayType))
		case seen[key]:
			errs = append(errs, fmt.Errorf("gateway limit %d: %s is limited twice", i, key))
		}
		seen[key] = true
		if l.MaxInFlight < 0 {
			errs = append(errs, fmt.Errorf("gateway limit %s: max-in-flight must not be negative, got %d", key, l.MaxInFlight))
		}
		if l.Rate < 0 || (l.Rate > 0 && l.Burst < 1) {
			errs = append(errs, fmt.Errorf("gateway limit %s: rate must not be negative and a rate needs a burst of at least 1, got rate %g burst %d", key, l.Rate, l.Burst))
		}
		if l.MaxInFlight == 0 && l.Rate == 0 {
			errs = append(errs, fmt.Errorf("gateway limit %s limits nothing: set max-in-flight or rate", key))
		}
	}
	return errors.Join(errs...)
}

// limitFor returns the limit of a gateway URL of type t, if any.
func (p Config) limitFor(url string, t core.GatewayType) (GatewayLimit, bool) {
	var byType *GatewayLimit
	for i, l := range p.Limits {
		if l.GatewayURL == url {
			return l, true
		}
		if l.GatewayType == t && byType == nil {
			byType = &p.Limits[i]
		}
	}
	if byType != nil {
		return *byType, true
	}
	return GatewayLimit{}, false
}

// RetryPolicy returns the retry policy for an intent's contract: the
// operator's table entry for its gateway type and mode when a table is set,
// else fallback.
func (p Config) RetryPolicy(c core.Contract, fallback core.RetryPolicy) core.RetryPolicy {
	if p.Retry != nil {
		return p.Retry.For(c.GatewayType, c.Mode)
	}
	return fallback
}

// Active reports whether any protection is configured; without it the
// executor never consults the gates.
func (p Config) Active() bool {
	return p.Breaker != nil || len(p.Limits) > 0 || p.Pauses != nil
}

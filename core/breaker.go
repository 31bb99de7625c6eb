package core

import (
	"errors"
	"fmt"
	"time"
)

// BreakerState is a circuit breaker's view of one gateway.
type BreakerState string

// The breaker states. Closed lets every call through; open lets none through
// until its probe time; half-open has let one probe through and waits for it.
const (
	BreakerClosed   BreakerState = "closed"
	BreakerOpen     BreakerState = "open"
	BreakerHalfOpen BreakerState = "half_open"
)

// BreakerConfig is the operator's breaker setting, shared by every gateway.
type BreakerConfig struct {
	// Threshold is how many consecutive gateway failures open the breaker.
	Threshold int
	// Window bounds the run of failures: a failure more than Window after
	// the first failure of the run starts a new run, so a trickle of rare
	// failures never opens the breaker.
	Window time.Duration
	// OpenFor is the first open interval, until the first probe.
	OpenFor time.Duration
	// MaxOpenFor bounds the interval, which doubles after each failed probe.
	MaxOpenFor time.Duration
}

// Default breaker settings, chosen for the example registry: five failures
// in a row within ten seconds is an outage, not a bad message; a first probe
// after 5 s (the default retry delay) and at most 15 s between probes keeps a
// 30 s deadline target able to land after a short outage.
const (
	DefaultBreakerThreshold  = 5
	DefaultBreakerWindow     = 10 * time.Second
	DefaultBreakerOpenFor    = 5 * time.Second
	DefaultBreakerMaxOpenFor = 15 * time.Second
)

// DefaultBreakerConfig returns the defaults above.
func DefaultBreakerConfig() BreakerConfig {
	return BreakerConfig{Threshold: DefaultBreakerThreshold, Window: DefaultBreakerWindow,
		OpenFor: DefaultBreakerOpenFor, MaxOpenFor: DefaultBreakerMaxOpenFor}
}

// Validate reports every problem at once, naming the field.
func (c BreakerConfig) Validate() error {
	var errs []error
	if c.Threshold < 1 {
		errs = append(errs, fmt.Errorf("breaker threshold must be at least 1, got %d", c.Threshold))
	}
	if c.Window <= 0 {
		errs = append(errs, fmt.Errorf("breaker window must be positive, got %s", c.Window))
	}
	if c.OpenFor <= 0 {
		errs = append(errs, fmt.Errorf("breaker open interval must be positive, got %s", c.OpenFor))
	}
	if c.MaxOpenFor < c.OpenFor {
		errs = append(errs, fmt.Errorf("breaker max open interval (%s) must not be below the open interval (%s)", c.MaxOpenFor, c.OpenFor))
	}
	return errors.Join(errs...)
}

// Admission is a breaker's answer to "may a call go now?".
type Admission int

// The admissions. AdmitProbe is the one call of a half-open breaker; its
// result must be recorded with probe set. DenyOpen means wait until the
// breaker's probe time; DenyProbing means a probe is out and its result
// decides (wait for it rather than for a time).
const (
	Admit Admission = iota
	AdmitProbe
	DenyOpen
	DenyProbing
)

// BreakerTransition records one change of state, for logs and metrics.
type BreakerTransition struct {
	From, To BreakerState
	// ProbeAt is the next probe time when To is open.
	ProbeAt time.Time
	// Failures is the run of failures that opened it (zero otherwise).
	Failures int
}

// Breaker is the circuit breaker of one gateway. It is a pure state machine:
// time comes in as arguments, and it is not safe for concurrent use (the
// caller serialises). The zero value is not usable; use NewBreaker.
type Breaker struct {
	cfg          BreakerConfig
	state        BreakerState
	failures     int
	firstFailure time.Time
	interval     time.Duration
	probeAt      time.Time
}

// NewBreaker returns a closed breaker. cfg must be valid.
func NewBreaker(cfg BreakerConfig) *Breaker {
	return &Breaker{cfg: cfg, state: BreakerClosed, interval: cfg.OpenFor}
}

// State returns the current state.
func (b *Breaker) State() BreakerState { return b.state }

// ProbeAt returns when an open breaker lets its probe through.
func (b *Breaker) ProbeAt() time.Time { return b.probeAt }

// Admit answers whether a call may go at now. An open breaker whose probe
// time has come turns half-open and admits exactly one probe; the transition
// is returned when one happened.
func (b *Breaker) Admit(now time.Time) (Admission, *BreakerTransition) {
	switch b.state {
	case BreakerClosed:
		return Admit, nil
	case BreakerOpen:
		if now.Before(b.probeAt) {
			return DenyOpen, nil
		}
		b.state = BreakerHalfOpen
		return AdmitProbe, &BreakerTransition{From: BreakerOpen, To: BreakerHalfOpen}
	default:
		return DenyProbing, nil
	}
}

// Record takes a call's result: failure says it was a gateway failure (not a
// well-formed answer), probe that the call was the half-open probe. A
// probe's success closes the breaker and its failure re-opens it with a
// doubled, bounded interval. Results of calls admitted before the breaker
// opened change nothing while it is open or probing: only the probe speaks
// for the gateway then.
func (b *Breaker) Record(now time.Time, failure, probe bool) *BreakerTransition {
	switch {
	case b.state == BreakerHalfOpen && probe:
		if failure {
			b.interval = min(2*b.interval, b.cfg.MaxOpenFor)
			return b.open(now, BreakerHalfOpen, 0)
		}
		b.state, b.failures, b.interval = BreakerClosed, 0, b.cfg.OpenFor
		return &BreakerTransition{From: BreakerHalfOpen, To: BreakerClosed}
	case b.state != BreakerClosed:
		return nil
	case !failure:
		b.failures = 0
		return nil
	}
	if b.failures == 0 || now.Sub(b.firstFailure) > b.cfg.Window {
		b.failures, b.firstFailure = 0, now
	}
	b.failures++
	if b.failures < b.cfg.Threshold {
		return nil
	}
	return b.open(now, BreakerClosed, b.failures)
}

func (b *Breaker) open(now time.Time, from BreakerState, failures int) *BreakerTransition {
	b.state, b.failures, b.probeAt = BreakerOpen, 0, now.Add(b.interval)
	return &BreakerTransition{From: from, To: BreakerOpen, ProbeAt: b.probeAt, Failures: failures}
}

// RecordLastTry takes the result of an intent's last try, a call the
// breaker let through while open (LastTry): a success closes it, since the
// gateway answered; a failure changes nothing, the breaker being open
// already.
func (b *Breaker) RecordLastTry(failure bool) *BreakerTransition {
	if failure || b.state == BreakerClosed {
		return nil
	}
	from := b.state
	b.state, b.failures, b.interval = BreakerClosed, 0, b.cfg.OpenFor
	return &BreakerTransition{From: from, To: BreakerClosed}
}

// Abandon tells a half-open breaker that its probe never reached the gateway
// (the call was not made after all): the next call may probe instead.
func (b *Breaker) Abandon(probe bool) {
	if probe && b.state == BreakerHalfOpen {
		b.state = BreakerOpen // probeAt is in the past: the next Admit probes
	}
}

// IsGatewayFailure classifies an attempt's result for the breaker: errors
// (transport, timeout, non-200, invalid answer) are the gateway's failures;
// a well-formed rejection is the provider's answer and counts only when its
// reason is in extra, the operator's additions to the failure set.
func IsGatewayFailure(r AttemptResult, extra []string) bool {
	if r.Err != nil || r.Outcome == nil {
		return true
	}
	if r.Outcome.Status != OutcomeRejected {
		return false
	}
	for _, reason := range extra {
		if reason == r.Outcome.Reason {
			return true
		}
	}
	return false
}

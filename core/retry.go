package core

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// Jitter says how an exponential delay is randomised, after AWS's
// "Exponential Backoff and Jitter": spreading retries over time is what stops
// many intents that failed together from retrying together.
type Jitter string

// The jitter modes. Full jitter waits a uniform time in [0, d); equal jitter
// waits d/2 plus a uniform time in [0, d/2); none waits exactly d.
const (
	JitterNone  Jitter = "none"
	JitterFull  Jitter = "full"
	JitterEqual Jitter = "equal"
)

// Random returns a uniform number in [0, 1). It must be safe for concurrent
// use, because the executor's workers ask for delays in parallel.
type Random func() float64

// NewRandom returns a Random seeded with seed, guarded by a mutex so workers
// can share it. Tests pass a fixed seed and get the same delays every run.
func NewRandom(seed uint64) Random {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Float64()
	}
}

// Exponential is the retry policy base·factor^(tries-1), capped at Max and
// then jittered. It grows with tries (attempts that reached the gateway),
// never with attempts that were not sent: the caller passes tries.
type Exponential struct {
	Base   time.Duration
	Factor float64
	Max    time.Duration
	Jitter Jitter
	// Random draws the jitter; it is required unless Jitter is none.
	Random Random
}

// Default exponential parameters, used by the operator syntax for every
// parameter it leaves out.
const (
	DefaultExponentialBase   = time.Second
	DefaultExponentialFactor = 2.0
	DefaultExponentialMax    = time.Minute
)

// Validate reports every problem of the policy at once.
func (e Exponential) Validate() error {
	var problems []string
	if e.Base <= 0 {
		problems = append(problems, fmt.Sprintf("base must be positive, got %s", e.Base))
	}
	if e.Factor < 1 || math.IsInf(e.Factor, 0) || math.IsNaN(e.Factor) {
		problems = append(problems, fmt.Sprintf("factor must be at least 1, got %v", e.Factor))
	}
	if e.Max < e.Base {
		problems = append(problems, fmt.Sprintf("max (%s) must not be below base (%s)", e.Max, e.Base))
	}
	switch e.Jitter {
	case JitterNone:
	case JitterFull, JitterEqual:
		if e.Random == nil {
			problems = append(problems, fmt.Sprintf("jitter %s needs a random source", e.Jitter))
		}
	default:
		problems = append(problems, fmt.Sprintf("jitter must be none, full or equal, got %q", e.Jitter))
	}
	if len(problems) > 0 {
		return fmt.Errorf("exponential retry policy: %s", joinProblems(problems))
	}
	return nil
}

// Delay implements RetryPolicy; tries below 1 count as 1.
func (e Exponential) Delay(tries int) time.Duration {
	d := e.ceiling(tries)
	switch e.Jitter {
	case JitterFull:
		return time.Duration(e.Random() * float64(d))
	case JitterEqual:
		return d/2 + time.Duration(e.Random()*float64(d/2))
	default:
		return d
	}
}

// ceiling is the delay before jitter: computed in floating point so a large
// try count saturates at Max instead of overflowing.
func (e Exponential) ceiling(tries int) time.Duration {
	if tries < 1 {
		tries = 1
	}
	d := float64(e.Base) * math.Pow(e.Factor, float64(tries-1))
	if d >= float64(e.Max) || math.IsInf(d, 0) || math.IsNaN(d) {
		return e.Max
	}
	return time.Duration(d)
}

// String renders the policy in the operator syntax ParseRetryPolicy reads.
func (e Exponential) String() string {
	return fmt.Sprintf("exponential:base=%s,factor=%v,max=%s,jitter=%s", e.Base, e.Factor, e.Max, e.Jitter)
}

// String renders the policy in the operator syntax ParseRetryPolicy reads.
func (d FixedDelay) String() string { return fmt.Sprintf("fixed:delay=%s", time.Duration(d)) }

func joinProblems(p []string) string {
	s := p[0]
	for _, x := range p[1:] {
		s += "; " + x
	}
	return s
}

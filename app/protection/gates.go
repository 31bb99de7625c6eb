package protection

import (
	"cmp"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// recentCalls is how many of a gateway's latest calls its failure rate
// covers.
const recentCalls = 100

// Kind is what the gates say about a due attempt.
type Kind int

const (
	// Call: make the attempt (the gates counted it in flight; report its
	// end with Report exactly once).
	Call Kind = iota
	// Defer: do not call; move the intent's next due time to Until
	// through the store (breaker open, or gateway paused). No try is spent.
	Defer
	// WaitUntil: do not call; keep the intent in the schedule at Until (a
	// rate limit reserved a token for then). Nothing is written.
	WaitUntil
	// WaitFree: do not call; park the intent until the gateway has room
	// (its max in flight is reached, or a half-open probe is out).
	WaitFree
)

// Verdict is the gates' answer for one due attempt.
type Verdict struct {
	Kind  Kind
	Until time.Time
	// Reason names why the attempt is held back ("paused",
	// "breaker_open", "retry_after", "max_in_flight", "probing", "rate").
	Reason string
	// probe marks the half-open breaker's one call, lastTry an intent's
	// last try, which an open breaker lets through (core.LastTry).
	probe, lastTry bool
}

// gatewayView is the gates' view of one gateway URL.
type gatewayView struct {
	url         string
	gatewayType core.GatewayType
	breaker     *core.Breaker
	limit       GatewayLimit
	bucket      *core.TokenBucket
	// prepaid holds intents that reserved a rate token, with the time it is
	// theirs from.
	prepaid  map[string]time.Time
	inFlight int
	// recent is a ring of the latest call results (true = failure).
	recent     [recentCalls]bool
	recentN    int
	recentNext int
	// busyUntil is when a gateway that answered busy (429 or 503 with
	// Retry-After) asked to be called again.
	busyUntil time.Time
	// lastTries holds the intents that had their last try.
	lastTries lastTries
}

// Gates hold every gateway's breaker, limits and counts for one leadership
// term: the state lives in the leader's memory and starts closed on a new
// leader. The executor's workers call them concurrently; one mutex guards
// them, held only for arithmetic, never across I/O.
type Gates struct {
	p       Config
	log     *slog.Logger
	metrics ports.ProtectionMetrics
	// pauses is the latest snapshot of the stored pauses.
	pauses atomic.Pointer[[]core.GatewayPause]

	mu    sync.Mutex
	views map[string]*gatewayView
}

// NewGates builds a leadership term's gates: every breaker starts closed
// with each new leader. The metrics receive the protection's events when
// they implement ports.ProtectionMetrics.
func NewGates(p Config, log *slog.Logger, m ports.Metrics) *Gates {
	pm, _ := m.(ports.ProtectionMetrics)
	return &Gates{p: p, log: log, metrics: pm, views: make(map[string]*gatewayView)}
}

// Active reports whether any protection needs the gates at all; without it
// the executor skips them entirely.
func (g *Gates) Active() bool { return g.p.Active() }

// SetPauses replaces the snapshot of the stored pauses.
func (g *Gates) SetPauses(ps []core.GatewayPause) {
	g.pauses.Store(&ps)
	if g.metrics != nil {
		g.metrics.GatewaysPaused(len(ps))
	}
}

// paused reports whether a stored pause covers the gateway.
func (g *Gates) paused(url string, t core.GatewayType) bool {
	ps := g.pauses.Load()
	return ps != nil && core.Paused(*ps, url, t)
}

// view returns the gateway's view, creating it on first sight. The caller
// holds mu.
func (g *Gates) view(c core.Contract) *gatewayView {
	v, ok := g.views[c.GatewayURL]
	if ok {
		return v
	}
	v = &gatewayView{url: c.GatewayURL, gatewayType: c.GatewayType, prepaid: map[string]time.Time{}}
	if g.p.Breaker != nil {
		v.breaker = core.NewBreaker(*g.p.Breaker)
	}
	if l, ok := g.p.limitFor(c.GatewayURL, c.GatewayType); ok {
		v.limit = l
		if l.Rate > 0 {
			v.bucket, _ = core.NewTokenBucket(l.Rate, l.Burst) // validated by New
		}
	}
	g.views[c.GatewayURL] = v
	return v
}

// Admit decides whether the due attempt of intent in may call its gateway
// at now. Call counts the call in flight: the caller must report it with
// Report exactly once. An open breaker lets an intent's last try through
// (core.LastTry), once per intent; a pause never does.
func (g *Gates) Admit(in core.Intent, now time.Time) Verdict {
	c := in.Contract
	paused := g.paused(c.GatewayURL, c.GatewayType)
	deadline, lastTry := core.LastTry(c, in.DeadlineStart(), now)
	g.mu.Lock()
	v := g.view(c)
	lastTry = lastTry && v.lastTries.left(in.IntentID)
	out, tr := g.decide(v, in.IntentID, paused, lastTry, now)
	if lastTry && out.Kind == Call {
		v.lastTries.take(in.IntentID, deadline, now)
	}
	g.mu.Unlock()
	g.transition(v.url, tr)
	switch out.Kind {
	case Defer:
		if g.metrics != nil {
			g.metrics.AttemptDeferred(v.url, out.Reason)
		}
	case WaitUntil, WaitFree:
		if g.metrics != nil {
			g.metrics.CallLimited(v.url, out.Reason)
		}
	}
	return out
}

func (g *Gates) decide(v *gatewayView, intentID string, paused, lastTry bool, now time.Time) (Verdict, *core.BreakerTransition) {
	if paused {
		return Verdict{Kind: Defer, Until: g.pausedUntil(now), Reason: "paused"}, nil
	}
	if now.Before(v.busyUntil) && !lastTry {
		// A last try is made even so: deferred, it would end without one,
		// and a busy answer costs the intent nothing.
		return Verdict{Kind: Defer, Until: v.busyUntil, Reason: "retry_after"}, nil
	}
	if v.limit.MaxInFlight > 0 && v.inFlight >= v.limit.MaxInFlight {
		return Verdict{Kind: WaitFree, Reason: "max_in_flight"}, nil
	}
	probe := false
	var tr *core.BreakerTransition
	if v.breaker != nil {
		var a core.Admission
		a, tr = v.breaker.Admit(now)
		switch {
		case a == core.AdmitProbe:
			probe = true
		case a == core.Admit:
		case lastTry:
			// Deferred again, the intent would end without a try: the
			// breaker lets its last try through.
		case a == core.DenyOpen:
			return Verdict{Kind: Defer, Until: v.breaker.ProbeAt(), Reason: "breaker_open"}, tr
		default: // core.DenyProbing
			return Verdict{Kind: WaitFree, Reason: "probing"}, tr
		}
	}
	if v.bucket != nil {
		at, ok := v.prepaid[intentID]
		switch {
		case ok && now.Before(at):
		case ok:
			delete(v.prepaid, intentID)
		case !v.bucket.Take(now):
			at = v.bucket.Reserve(now)
			v.prepaid[intentID] = at
		}
		if !at.IsZero() && now.Before(at) {
			if v.breaker != nil {
				v.breaker.Abandon(probe)
			}
			return Verdict{Kind: WaitUntil, Until: at, Reason: "rate"}, tr
		}
	}
	v.inFlight++
	return Verdict{Kind: Call, probe: probe, lastTry: lastTry && !probe}, tr
}

// pausedUntil is when an attempt for a paused gateway is looked at again.
func (g *Gates) pausedUntil(now time.Time) time.Time {
	return now.Add(cmp.Or(g.p.PauseRecheck, DefaultPauseRecheck))
}

// Recheck looks again, right before the call, at an attempt admitted
// earlier (it was reserved ahead of its call slot meanwhile): when its
// gateway was paused or its breaker opened since, it answers Defer with the
// time to move the attempt to, and counts the deferral; otherwise it
// returns the verdict it was given. A half-open probe is never taken back:
// it is the one call the breaker let through; nor is a last try.
func (g *Gates) Recheck(c core.Contract, vd Verdict, now time.Time) Verdict {
	out, deferred := g.recheck(c, vd, now)
	if deferred && g.metrics != nil {
		g.metrics.AttemptDeferred(c.GatewayURL, out.Reason)
	}
	return out
}

func (g *Gates) recheck(c core.Contract, vd Verdict, now time.Time) (Verdict, bool) {
	if g.paused(c.GatewayURL, c.GatewayType) {
		return Verdict{Kind: Defer, Until: g.pausedUntil(now), Reason: "paused"}, true
	}
	if vd.probe || vd.lastTry {
		return vd, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	v := g.views[c.GatewayURL]
	switch {
	case v == nil:
		return vd, false
	case now.Before(v.busyUntil):
		return Verdict{Kind: Defer, Until: v.busyUntil, Reason: "retry_after"}, true
	case v.breaker == nil || v.breaker.State() != core.BreakerOpen:
		return vd, false
	}
	return Verdict{Kind: Defer, Until: v.breaker.ProbeAt(), Reason: "breaker_open"}, true
}

// Report tells the gates how an admitted attempt ended. called says the
// gateway was really called (false: the attempt stopped before the call, or
// was cut short by the executor stopping); r is its result when called.
func (g *Gates) Report(c core.Contract, vd Verdict, called bool, r core.AttemptResult, now time.Time) {
	failure := core.IsGatewayFailure(r, g.p.FailureReasons)
	wait, busy := ports.RetryAfter(r.Err)
	g.mu.Lock()
	v := g.view(c)
	v.inFlight--
	var tr *core.BreakerTransition
	switch {
	case called && busy:
		// The gateway is up and asked for time: it waits, and its breaker
		// hears nothing (a probe's turn passes to the next call).
		v.busyUntil = later(v.busyUntil, now.Add(min(wait, cmp.Or(g.p.MaxRetryAfter, DefaultMaxRetryAfter))))
		if v.breaker != nil {
			v.breaker.Abandon(vd.probe)
		}
	case called:
		v.recent[v.recentNext] = failure
		v.recentNext = (v.recentNext + 1) % recentCalls
		v.recentN = min(v.recentN+1, recentCalls)
		switch {
		case v.breaker == nil:
		case vd.lastTry:
			tr = v.breaker.RecordLastTry(failure)
		default:
			tr = v.breaker.Record(now, failure, vd.probe)
		}
	case v.breaker != nil:
		v.breaker.Abandon(vd.probe)
	}
	g.mu.Unlock()
	g.transition(v.url, tr)
}

// BusyUntil returns when a gateway that answered busy asked to be called
// again, if that is after now: the executor moves the busy attempt there,
// as a deferral.
func (g *Gates) BusyUntil(url string, now time.Time) (time.Time, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if v, ok := g.views[url]; ok && now.Before(v.busyUntil) {
		return v.busyUntil, true
	}
	return time.Time{}, false
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

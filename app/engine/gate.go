package engine

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

// verdictKind is what the gate says about a due attempt.
type verdictKind int

const (
	// callNow: make the attempt (the gate counted it in flight).
	callNow verdictKind = iota
	// deferTo: do not call; move the intent's next due time to until
	// through the store (breaker open, or gateway paused).
	deferTo
	// waitUntil: do not call; keep the intent in the schedule at until
	// (a rate limit reserved a token for then).
	waitUntil
	// waitFree: do not call; park the intent until the gateway has room
	// (its max in flight is reached, or a half-open probe is out).
	waitFree
)

// verdict is the gate's answer for one due attempt.
type verdict struct {
	kind   verdictKind
	until  time.Time
	reason string
	// probe marks the half-open breaker's one call.
	probe bool
}

// gateway is the executor's view of one gateway URL.
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
}

// gates holds every gateway's breaker, limits and counts for one
// leadership term: the state lives in the leader's memory and starts closed
// on a new leader. Workers call it concurrently; one mutex guards it, held
// only for arithmetic, never across I/O.
type gates struct {
	p       Protection
	log     *slog.Logger
	metrics ports.ProtectionMetrics
	// pauses is the latest snapshot of the stored pauses.
	pauses atomic.Pointer[[]core.GatewayPause]

	mu    sync.Mutex
	views map[string]*gatewayView
}

func newGates(p Protection, log *slog.Logger, m ports.Metrics) *gates {
	pm, _ := m.(ports.ProtectionMetrics)
	return &gates{p: p, log: log, metrics: pm, views: make(map[string]*gatewayView)}
}

// active reports whether any protection needs the gate at all; without it
// the executor skips the gate entirely (today's path).
func (g *gates) active() bool {
	return g.p.Breaker != nil || len(g.p.Limits) > 0 || g.p.Pauses != nil
}

// setPauses replaces the pause snapshot.
func (g *gates) setPauses(ps []core.GatewayPause) {
	g.pauses.Store(&ps)
	if g.metrics != nil {
		g.metrics.GatewaysPaused(len(ps))
	}
}

// paused reports whether a stored pause covers the gateway.
func (g *gates) paused(url string, t core.GatewayType) bool {
	ps := g.pauses.Load()
	return ps != nil && core.Paused(*ps, url, t)
}

// view returns the gateway's view, creating it on first sight. The caller
// holds mu.
func (g *gates) view(c core.Contract) *gatewayView {
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

// admit decides whether the due attempt of intentID may call its gateway at
// now. callNow counts the call in flight: the caller must report it with
// finish exactly once.
func (g *gates) admit(intentID string, c core.Contract, now time.Time) verdict {
	paused := g.paused(c.GatewayURL, c.GatewayType)
	g.mu.Lock()
	v := g.view(c)
	out, tr := g.decide(v, intentID, paused, now)
	g.mu.Unlock()
	g.transition(v.url, tr)
	switch out.kind {
	case deferTo:
		if g.metrics != nil {
			g.metrics.AttemptDeferred(v.url, out.reason)
		}
	case waitUntil, waitFree:
		if g.metrics != nil {
			g.metrics.CallLimited(v.url, out.reason)
		}
	}
	return out
}

// decide is admit's arithmetic, under mu. A prepaid rate token is kept
// until a call is actually made, and is spent no earlier than the time it
// was reserved for: an intent judged again before then (a refresh put it
// back at its stored due time) waits for that time again instead of
// calling ahead of the rate.
func (g *gates) decide(v *gatewayView, intentID string, paused bool, now time.Time) (verdict, *core.BreakerTransition) {
	if paused {
		return verdict{kind: deferTo, until: g.pausedUntil(now), reason: "paused"}, nil
	}
	if v.limit.MaxInFlight > 0 && v.inFlight >= v.limit.MaxInFlight {
		return verdict{kind: waitFree, reason: "max_in_flight"}, nil
	}
	probe := false
	var tr *core.BreakerTransition
	if v.breaker != nil {
		var a core.Admission
		a, tr = v.breaker.Admit(now)
		switch a {
		case core.DenyOpen:
			return verdict{kind: deferTo, until: v.breaker.ProbeAt(), reason: "breaker_open"}, tr
		case core.DenyProbing:
			return verdict{kind: waitFree, reason: "probing"}, tr
		case core.AdmitProbe:
			probe = true
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
			return verdict{kind: waitUntil, until: at, reason: "rate"}, tr
		}
	}
	v.inFlight++
	return verdict{kind: callNow, probe: probe}, tr
}

// pausedUntil is when an attempt for a paused gateway is looked at again.
func (g *gates) pausedUntil(now time.Time) time.Time {
	return now.Add(cmp.Or(g.p.PauseRecheck, DefaultPauseRecheck))
}

// recheck looks again, right before the call, at an attempt admitted
// earlier (it was reserved ahead of its call slot meanwhile): when its
// gateway was paused or its breaker opened since, it reports closed with the
// time to move the attempt to. A half-open probe is never taken back: it is
// the one call the breaker let through.
func (g *gates) recheck(c core.Contract, vd verdict, now time.Time) (until time.Time, reason string, closed bool) {
	if g.paused(c.GatewayURL, c.GatewayType) {
		return g.pausedUntil(now), "paused", true
	}
	if vd.probe {
		return time.Time{}, "", false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	v := g.views[c.GatewayURL]
	if v == nil || v.breaker == nil || v.breaker.State() != core.BreakerOpen {
		return time.Time{}, "", false
	}
	return v.breaker.ProbeAt(), "breaker_open", true
}

// noteDeferred counts an attempt deferred by recheck.
func (g *gates) noteDeferred(url, reason string) {
	if g.metrics != nil {
		g.metrics.AttemptDeferred(url, reason)
	}
}

// finish reports the end of an admitted attempt. called says the gateway
// was really called (false: the attempt stopped before the call, or was cut
// short by the executor stopping); r is its result when called.
func (g *gates) finish(c core.Contract, vd verdict, called bool, r core.AttemptResult, now time.Time) {
	failure := core.IsGatewayFailure(r, g.p.FailureReasons)
	g.mu.Lock()
	v := g.view(c)
	v.inFlight--
	var tr *core.BreakerTransition
	if called {
		v.recent[v.recentNext] = failure
		v.recentNext = (v.recentNext + 1) % recentCalls
		v.recentN = min(v.recentN+1, recentCalls)
		if v.breaker != nil {
			tr = v.breaker.Record(now, failure, vd.probe)
		}
	} else if v.breaker != nil {
		v.breaker.Abandon(vd.probe)
	}
	g.mu.Unlock()
	g.transition(v.url, tr)
}

// room returns how many parked attempts of the gateway may be released
// now: all of them when its breaker is open (they will be deferred), none
// while a probe is out, else the free slots under its max in flight (all
// when it has none).
func (g *gates) room(url string, parked int) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	v, ok := g.views[url]
	if !ok {
		return parked
	}
	if v.breaker != nil && v.breaker.State() == core.BreakerHalfOpen {
		return 0
	}
	if v.breaker != nil && v.breaker.State() == core.BreakerOpen {
		return parked
	}
	if v.limit.MaxInFlight > 0 {
		return max(0, min(parked, v.limit.MaxInFlight-v.inFlight))
	}
	return parked
}

// transition logs and counts a breaker transition.
func (g *gates) transition(url string, tr *core.BreakerTransition) {
	if tr == nil {
		return
	}
	attrs := []any{"gateway_url", url, "from", tr.From, "to", tr.To}
	if tr.To == core.BreakerOpen {
		attrs = append(attrs, "probe_at", tr.ProbeAt)
	}
	if tr.Failures > 0 {
		attrs = append(attrs, "consecutive_failures", tr.Failures)
	}
	if tr.To == core.BreakerClosed {
		g.log.Info("gateway_breaker_transition", attrs...)
	} else {
		g.log.Warn("gateway_breaker_transition", attrs...)
	}
	if g.metrics != nil {
		g.metrics.BreakerTransition(url, tr.From, tr.To)
	}
}

// status returns the executor's view of every gateway it has seen.
func (g *gates) status() map[string]ports.GatewayExecution {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]ports.GatewayExecution, len(g.views))
	for url, v := range g.views {
		e := ports.GatewayExecution{
			InFlight: v.inFlight, MaxInFlight: v.limit.MaxInFlight, Rate: v.limit.Rate, Burst: v.limit.Burst,
			RecentCalls: v.recentN,
		}
		for i := range v.recentN {
			if v.recent[i] {
				e.RecentFailures++
			}
		}
		if v.breaker != nil {
			e.Breaker = v.breaker.State()
			if e.Breaker == core.BreakerOpen {
				e.ProbeAt = v.breaker.ProbeAt()
			}
		}
		out[url] = e
	}
	return out
}

// typeOf returns the gateway type of a URL the gates have seen.
func (g *gates) typeOf(url string) core.GatewayType {
	g.mu.Lock()
	defer g.mu.Unlock()
	if v, ok := g.views[url]; ok {
		return v.gatewayType
	}
	return ""
}

package gatewaysim

import (
	"encoding/json"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/submissionmanager/submission-manager/core"
)

// shardCount spreads references over this many locks, so concurrent
// submissions of different references rarely wait for each other.
const shardCount = 64

// Stats counts what one simulated gateway (or, merged, the whole simulator)
// received and how it answered.
type Stats struct {
	// Total counts submissions received, also malformed ones.
	Total int64
	// Accepted counts acceptances; a reference is accepted at most once.
	Accepted int64
	// Rejected counts rejected answers, duplicates included.
	Rejected int64
	// Duplicates counts rejections with duplicate_reference.
	Duplicates int64
	// Faults counts submissions answered with no outcome.
	Faults int64
	// References holds the counts per reference.
	References map[string]ReferenceStats
	// Outage is the outage switch and its call count; merged, it is on
	// when any gateway's is and counts the calls of all.
	Outage OutageStats
}

// ReferenceStats counts the submissions of one reference.
type ReferenceStats struct {
	Submissions int
	Accepted    int
	Rejected    int
	Duplicates  int
	Faults      int
	// LastPayload is the payload of the latest submission, byte for byte
	// as received, so tests can check that payloads travel verbatim.
	LastPayload json.RawMessage
	// LastTraceParent is the traceparent header of the latest submission
	// as received (several lines joined with commas, as HTTP combines
	// them), empty when it carried none: it shows in which trace, and
	// under which span, the caller made the call.
	LastTraceParent string
	// Lookups counts the lookups of this reference, and
	// LastLookupTraceParent is the traceparent header of the latest, kept
	// as LastTraceParent is: a caller that resolves an attempt in doubt
	// asks in the attempt's trace.
	Lookups               int
	LastLookupTraceParent string
}

// reference is the gateway's memory of one reference.
type reference struct {
	ReferenceStats
	// given is the outcome the lookup reports: the acceptance once there
	// is one, else the latest rejection; nil while the reference has had
	// no outcome.
	given *core.Outcome
	// script holds the steps not yet used.
	script []Step
}

type shard struct {
	mu   sync.Mutex
	refs map[string]*reference
}

// totals are the gateway-wide counters, kept apart from the shards so that
// reading them never takes a lock.
type totals struct {
	total, accepted, rejected, duplicates, faults atomic.Int64
}

// registry is one gateway's state: references in shards, totals in atomics.
type registry struct {
	seed   maphash.Seed
	shards [shardCount]shard
	totals totals
}

func newRegistry() *registry {
	r := &registry{seed: maphash.MakeSeed()}
	for i := range r.shards {
		r.shards[i].refs = make(map[string]*reference)
	}
	return r
}

func (r *registry) shard(ref string) *shard {
	return &r.shards[maphash.String(r.seed, ref)%shardCount]
}

// with runs fn on the reference's state under its shard lock, creating it
// when new. fn must not block: no latency is waited out under the lock.
func (r *registry) with(ref string, fn func(*reference)) {
	s := r.shard(ref)
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.refs[ref]
	if !ok {
		st = &reference{}
		s.refs[ref] = st
	}
	fn(st)
}

// script replaces a reference's remaining steps.
func (r *registry) script(ref string, steps []Step) {
	r.with(ref, func(st *reference) { st.script = slices.Clone(steps) })
}

// reset forgets every reference and zeroes the totals, then applies the
// start scripts again.
func (r *registry) reset(scripts map[string][]Step) {
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		s.refs = make(map[string]*reference)
		s.mu.Unlock()
	}
	for _, c := range []*atomic.Int64{&r.totals.total, &r.totals.accepted, &r.totals.rejected, &r.totals.duplicates, &r.totals.faults} {
		c.Store(0)
	}
	for ref, steps := range scripts {
		r.script(ref, steps)
	}
}

// stats copies the counters; with only set, it reports that one reference.
// References that were scripted but neither submitted nor looked up are left
// out.
func (r *registry) stats(only string) Stats {
	st := Stats{
		Total:      r.totals.total.Load(),
		Accepted:   r.totals.accepted.Load(),
		Rejected:   r.totals.rejected.Load(),
		Duplicates: r.totals.duplicates.Load(),
		Faults:     r.totals.faults.Load(),
		References: make(map[string]ReferenceStats),
	}
	collect := func(ref string, rs *reference) {
		if rs.Submissions > 0 || rs.Lookups > 0 {
			c := rs.ReferenceStats
			c.LastPayload = slices.Clone(c.LastPayload)
			st.References[ref] = c
		}
	}
	if only != "" {
		s := r.shard(only)
		s.mu.Lock()
		if rs, ok := s.refs[only]; ok {
			collect(only, rs)
		}
		s.mu.Unlock()
		return st
	}
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		for ref, rs := range s.refs {
			collect(ref, rs)
		}
		s.mu.Unlock()
	}
	return st
}

// answer is what the gateway decided for one submission: an outcome, or a
// fault mode.
type answer struct {
	fault   Mode // empty for an outcome
	outcome core.Outcome
}

// decide records one submission of ref and decides its answer atomically
// with the reference's memory, so two concurrent submissions of one
// reference can never both be accepted. accept and reason are the
// pre-drawn unscripted outcome; mode is the gateway's current mode;
// traceParent is the submission's traceparent header, kept as received.
func (r *registry) decide(ref string, payload json.RawMessage, traceParent string, mode Mode, accept bool, reason string, messageID func() string) answer {
	var a answer
	r.totals.total.Add(1)
	r.with(ref, func(st *reference) {
		st.Submissions++
		st.LastPayload = payload
		st.LastTraceParent = traceParent
		if len(st.script) > 0 {
			step := st.script[0]
			st.script = st.script[1:]
			if m, ok := step.mode(); ok {
				mode = m
			} else {
				mode = ModeNormal
				accept, reason = step == StepAccepted, string(step)
			}
		}
		if mode != ModeNormal {
			if mode.accepts() && st.Accepted == 0 {
				st.Accepted++
				r.totals.accepted.Add(1)
				st.given = &core.Outcome{Status: core.OutcomeAccepted, MessageID: messageID()}
			}
			st.Faults++
			r.totals.faults.Add(1)
			a = answer{fault: mode}
			return
		}
		switch {
		case st.Accepted > 0:
			reason = core.ReasonDuplicateReference
		case accept:
			st.Accepted++
			r.totals.accepted.Add(1)
			a = answer{outcome: core.Outcome{Status: core.OutcomeAccepted, MessageID: messageID()}}
			st.given = &a.outcome
			return
		}
		st.Rejected++
		r.totals.rejected.Add(1)
		if reason == core.ReasonDuplicateReference {
			st.Duplicates++
			r.totals.duplicates.Add(1)
		}
		a = answer{outcome: core.Outcome{Status: core.OutcomeRejected, Reason: reason}}
		if st.Accepted == 0 {
			given := a.outcome
			st.given = &given
		}
	})
	return a
}

// lookup records a lookup of ref with its traceparent header and returns
// the outcome the reference was given (see reference.given), or false when
// it has had none.
func (r *registry) lookup(ref, traceParent string) (o core.Outcome, given bool) {
	r.with(ref, func(st *reference) {
		st.Lookups++
		st.LastLookupTraceParent = traceParent
		if st.given != nil {
			o, given = *st.given, true
		}
	})
	return o, given
}

// outageFault counts a submission answered by an outage: a fault that
// touches no reference.
func (r *registry) outageFault() {
	r.totals.total.Add(1)
	r.totals.faults.Add(1)
}

// malformed records a submission the gateway could not read; it is rejected
// with invalid_request and, when it named a reference, counted under it.
func (r *registry) malformed(ref, traceParent string) answer {
	r.totals.total.Add(1)
	r.totals.rejected.Add(1)
	if ref != "" {
		r.with(ref, func(st *reference) {
			st.Submissions++
			st.LastTraceParent = traceParent
			st.Rejected++
		})
	}
	return answer{outcome: core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonInvalidRequest}}
}

// merge adds o's counts to s, for a simulator-wide view.
func (s *Stats) merge(o Stats) {
	s.Total += o.Total
	s.Accepted += o.Accepted
	s.Rejected += o.Rejected
	s.Duplicates += o.Duplicates
	s.Faults += o.Faults
	s.Outage.On = s.Outage.On || o.Outage.On
	s.Outage.Calls += o.Outage.Calls
	if o.Outage.Mode != "" {
		s.Outage.Mode = o.Outage.Mode
	}
	if s.References == nil {
		s.References = make(map[string]ReferenceStats)
	}
	for ref, rs := range o.References {
		cur, ok := s.References[ref]
		if !ok {
			s.References[ref] = rs
			continue
		}
		cur.Submissions += rs.Submissions
		cur.Accepted += rs.Accepted
		cur.Rejected += rs.Rejected
		cur.Duplicates += rs.Duplicates
		cur.Faults += rs.Faults
		if rs.LastPayload != nil {
			cur.LastPayload = rs.LastPayload
		}
		if rs.LastTraceParent != "" {
			cur.LastTraceParent = rs.LastTraceParent
		}
		cur.Lookups += rs.Lookups
		if rs.LastLookupTraceParent != "" {
			cur.LastLookupTraceParent = rs.LastLookupTraceParent
		}
		s.References[ref] = cur
	}
}

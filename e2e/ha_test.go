package e2e

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The spec's five required HA tests (leader-lease.md, "Tests (must exist)"),
// each on one real SQLite file shared by several in-process instances that
// each open it on their own, with the real elector and engine and the
// gateway simulator over HTTP. The multi-process test with a real HAProxy is
// in ha_haproxy_test.go.

// haIDs returns n intent ids with a prefix.
func haIDs(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return out
}

// haTarget alternates the two HA targets.
func haTarget(i int) string {
	if i%2 == 0 {
		return "sms.ha"
	}
	return "push.ha"
}

// haWaitAcquireAttempts waits until each instance has tried to acquire the
// lease n more times than it had when the wait began: proof that followers
// were actively competing during the interval, without sleeping a guess.
func haWaitAcquireAttempts(t *testing.T, n int64, instances ...*haInstance) {
	t.Helper()
	base := make([]int64, len(instances))
	for i, in := range instances {
		base[i] = in.link.acquires.Load()
	}
	for i, in := range instances {
		in.link.awaitAcquires(t, fmt.Sprintf("%s trying %d more times", in.holderID, n), base[i]+n)
	}
}

// 1. Single leader on concurrent start.
func TestHASingleLeaderOnConcurrentStart(t *testing.T) {
	c := newHACluster(t, gatewaysim.Config{Latency: 2 * time.Millisecond})
	c.gate = make(chan struct{})
	instances := []*haInstance{c.start("sm-01"), c.start("sm-02"), c.start("sm-03")}
	close(c.gate) // all three electors try to acquire at once
	lead := c.waitLeader(instances...)
	var followers []*haInstance
	for _, in := range instances {
		if in != lead {
			followers = append(followers, in)
		}
	}
	// Over more than a lease duration of renewals and acquire attempts
	// (six acquire intervals), exactly one instance leads, always the same:
	// who leads is sampled every few milliseconds (the samples are the
	// check) until a follower tried six more times, within haWait.
	end := followers[0].link.acquires.Load() + 6
	sample := time.NewTicker(5 * time.Millisecond)
	defer sample.Stop()
	bound := time.After(haWait)
	for followers[0].link.acquires.Load() < end {
		for _, in := range instances {
			if in.leads() != (in == lead) {
				t.Fatalf("%s leads=%v while %s is the leader", in.holderID, in.leads(), lead.holderID)
			}
		}
		select {
		case <-sample.C:
		case <-bound:
			t.Fatalf("%s did not try to acquire the lease six times within %s", followers[0].holderID, haWait)
		}
	}
	if l := c.lease(); l.HolderID != lead.holderID || l.Epoch != 1 {
		t.Fatalf("lease = %+v, want %s at epoch 1", l, lead.holderID)
	}

	// Intents submitted through every instance are all executed by the
	// leader alone.
	all := haIDs("concurrent", 30)
	for i, id := range all {
		instances[i%3].submit(t, id, haTarget(i))
	}
	c.audit.waitTerminal(t, all)
	for _, a := range c.audit.attempts(t) {
		if a.HolderID != lead.holderID || a.Epoch != 1 {
			t.Errorf("attempt %d of %q by %s at epoch %d; only %s at epoch 1 may execute", a.Number, a.IntentID, a.HolderID, a.Epoch, lead.holderID)
		}
	}
	for _, f := range followers {
		if n := f.calls.count(); n != 0 {
			t.Errorf("follower %s called the gateway %d times", f.holderID, n)
		}
	}
	if lead.calls.count() < len(all) {
		t.Errorf("the leader made %d gateway calls for %d intents", lead.calls.count(), len(all))
	}
	c.checkGatewayCallsRecorded(instances...)
}

// 2. Failover after expiry: the leader loses its database link (it cannot
// renew, and cannot release either), a follower takes over once the lease
// expired in database time, within lease_duration + acquire_interval.
func TestHAFailoverAfterExpiry(t *testing.T) {
	c := newHACluster(t, gatewaysim.Config{Latency: 2 * time.Millisecond})
	instances := []*haInstance{c.start("sm-01"), c.start("sm-02"), c.start("sm-03")}
	old := c.waitLeader(instances...)
	before := haIDs("before", 10)
	for i, id := range before {
		instances[i%3].submit(t, id, haTarget(i))
	}
	c.audit.waitTerminal(t, before)

	cutAt := time.Now()
	old.link.cut.Store(true)
	var survivors []*haInstance
	for _, in := range instances {
		if in != old {
			survivors = append(survivors, in)
		}
	}
	haPoll(t, "the cut-off leader dropping leadership", func() bool { return !old.leads() })
	callsAtCut := old.calls.count()
	// The old leader's last renewal is in; its lease runs out on its own.
	oldLease := c.lease()
	if oldLease.HolderID != old.holderID {
		t.Fatalf("lease = %+v before its expiry, want %s's", oldLease, old.holderID)
	}
	next := c.waitLeader(survivors...)
	took := time.Since(cutAt)
	newLease := c.lease()
	if newLease.Epoch != oldLease.Epoch+1 || newLease.HolderID != next.holderID {
		t.Fatalf("new lease %+v, want %s at epoch %d", newLease, next.holderID, oldLease.Epoch+1)
	}
	if newLease.AcquiredAt.Before(oldLease.ExpiresAt) {
		t.Fatalf("successor acquired at %s, before the old lease's expiry at %s", newLease.AcquiredAt, oldLease.ExpiresAt)
	}
	if bound := haLeaseDuration + haAcquireInterval + time.Second; took > bound {
		t.Errorf("failover took %s, more than lease_duration + acquire_interval + 1s = %s", took, bound)
	}
	t.Logf("failover: %s after the leader's link was cut", took)

	after := haIDs("after", 10)
	for i, id := range after {
		survivors[i%2].submit(t, id, haTarget(i))
	}
	c.audit.waitTerminal(t, after)
	for _, a := range c.audit.attempts(t) {
		if a.StartedAt.After(cutAt) && a.HolderID != next.holderID {
			t.Errorf("attempt %d of %q by %s after the failover; only %s may execute", a.Number, a.IntentID, a.HolderID, next.holderID)
		}
	}
	if n := old.calls.count(); n != callsAtCut {
		t.Errorf("the cut-off leader made %d gateway calls after losing leadership", n-callsAtCut)
	}

	// Healed, the old leader stays a follower: the lease is held.
	old.link.cut.Store(false)
	haWaitAcquireAttempts(t, 2, old)
	if old.leads() || c.lease().HolderID != next.holderID {
		t.Fatalf("after healing, %s leads=%v and the lease is %+v; want %s to keep it", old.holderID, old.leads(), c.lease(), next.holderID)
	}
	c.checkGatewayCallsRecorded(instances...)
}

// 3. No execution without leadership: while an outside holder keeps the
// lease, instances accept intents but none is attempted; the moment the
// lease is free, one instance acquires it and executes them all.
func TestHANoExecutionWithoutLeadership(t *testing.T) {
	c := newHACluster(t, gatewaysim.Config{})
	// The outsider holds the lease before any instance starts.
	outsider := haAcquireOutside(t, c, time.Minute)
	instances := []*haInstance{c.start("sm-01"), c.start("sm-02")}
	pending := haIDs("follower", 20)
	for i, id := range pending {
		instances[i%2].submit(t, id, haTarget(i))
	}
	// Both keep trying for well over a refresh interval and a lease
	// duration; nobody may lead or execute.
	haWaitAcquireAttempts(t, 6, instances...)
	for _, in := range instances {
		if in.leads() {
			t.Fatalf("%s leads while the outsider holds the lease", in.holderID)
		}
		if n := in.calls.count(); n != 0 {
			t.Fatalf("%s called the gateway %d times without the lease", in.holderID, n)
		}
	}
	if rows := c.audit.attempts(t); len(rows) != 0 {
		t.Fatalf("%d attempts recorded without leadership, e.g. %+v", len(rows), rows[0])
	}
	for id, in := range c.audit.intents(t) {
		if in.Status != core.StatusPending || in.AttemptCount != 0 {
			t.Fatalf("intent %q is %s with %d attempts without a leader", id, in.Status, in.AttemptCount)
		}
	}
	if st := c.sim.Stats(); st.Total != 0 {
		t.Fatalf("the gateways received %d submissions without a leader", st.Total)
	}

	c.releaseOutsider(outsider)
	lead := c.waitLeader(instances...)
	c.audit.waitTerminal(t, pending)
	for _, a := range c.audit.attempts(t) {
		if a.HolderID != lead.holderID || a.Epoch != outsider.Epoch+1 {
			t.Errorf("attempt %d of %q by %s at epoch %d, want %s at epoch %d", a.Number, a.IntentID, a.HolderID, a.Epoch, lead.holderID, outsider.Epoch+1)
		}
	}
	c.checkGatewayCallsRecorded(instances...)
}

// haAcquireOutside takes the lease as an outside holder for d.
func haAcquireOutside(t *testing.T, c *haCluster, d time.Duration) core.Lease {
	t.Helper()
	haPoll(t, "the outsider acquiring the lease", func() bool {
		l, ok, err := c.admin.Leases().Acquire(t.Context(), ports.AcquireLeaseParams{
			LeaseName: core.DefaultLeaseName, HolderID: "outsider", Duration: d,
		})
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			c.t.Logf("outsider holds the lease at epoch %d", l.Epoch)
		}
		return ok
	})
	return c.lease()
}

// 4. Leader stops executing immediately on lease loss: an outside holder
// takes the lease while the leader is busy retrying intents. No attempt of
// the old epoch starts after the takeover; the old leader notices at its
// first fenced write or renewal, well within the lease duration it believed
// it had; nothing runs until the outsider lets go.
func TestHALeaderStopsAtOnceOnLeaseLoss(t *testing.T) {
	c := newHACluster(t, gatewaysim.Config{Latency: 5 * time.Millisecond})
	busy := haIDs("busy", 20)
	for _, id := range busy {
		steps := make([]gatewaysim.Step, 0, 16)
		for range 15 {
			steps = append(steps, gatewaysim.Rejected(core.ReasonProviderFailure))
		}
		if err := c.sim.Script(id, append(steps, gatewaysim.StepAccepted)...); err != nil {
			t.Fatal(err)
		}
	}
	instances := []*haInstance{c.start("sm-01"), c.start("sm-02"), c.start("sm-03")}
	old := c.waitLeader(instances...)
	for _, id := range busy {
		old.submit(t, id, "sms.busy")
	}
	haPoll(t, "the leader busy retrying", func() bool { return len(c.audit.attempts(t)) >= 40 })

	stolen, outsider := c.stealLease(time.Minute)
	// The takeover happened, in database time, before the outsider's
	// acquire; the old leader's lease was expired by then.
	stealAt := outsider.AcquiredAt.Add(epochOrderTolerance)
	tookOver := time.Now()
	haPoll(t, "the old leader stopping", func() bool { return !old.leads() })
	stoppedAfter := time.Since(tookOver)
	if stoppedAfter >= haLeaseDuration {
		t.Errorf("the old leader stopped %s after losing the lease, not before its lease duration (%s) ran out", stoppedAfter, haLeaseDuration)
	}
	t.Logf("the old leader stopped %s after the takeover", stoppedAfter)

	// While the outsider holds the lease, every instance (the old leader
	// included) keeps trying to acquire, and nothing is attempted.
	haWaitAcquireAttempts(t, 3, instances...)
	rowsDuringOutsider := len(c.audit.attempts(t))
	for _, a := range c.audit.attempts(t) {
		if a.Epoch == stolen.Epoch && a.StartedAt.After(stealAt) {
			t.Errorf("attempt %d of %q started at epoch %d %s after the lease was taken", a.Number, a.IntentID, a.Epoch, a.StartedAt.Sub(outsider.AcquiredAt))
		}
		if a.Epoch > stolen.Epoch {
			t.Errorf("attempt %d of %q at epoch %d while the outsider holds the lease", a.Number, a.IntentID, a.Epoch)
		}
	}
	callsDuringOutsider := map[*haInstance]int{}
	for _, in := range instances {
		callsDuringOutsider[in] = in.calls.count()
		if in.leads() {
			t.Errorf("%s leads while the outsider holds the lease", in.holderID)
		}
	}
	haWaitAcquireAttempts(t, 3, instances...)
	if n := len(c.audit.attempts(t)); n != rowsDuringOutsider {
		t.Errorf("%d attempts recorded while the outsider held the lease", n-rowsDuringOutsider)
	}
	for _, in := range instances {
		if n := in.calls.count(); n != callsDuringOutsider[in] {
			t.Errorf("%s made %d gateway calls while the outsider held the lease", in.holderID, n-callsDuringOutsider[in])
		}
	}

	c.releaseOutsider(outsider)
	next := c.waitLeader(instances...)
	c.audit.waitTerminal(t, busy)
	if l := c.lease(); l.Epoch != outsider.Epoch+1 || l.HolderID != next.holderID {
		t.Fatalf("lease after the outsider = %+v, want %s at epoch %d", l, next.holderID, outsider.Epoch+1)
	}
	// Attempts the old leader had in flight at the takeover could not be
	// finished through the fence; the next leader closed them as unknown.
	for _, a := range c.audit.attempts(t) {
		if a.FinishedAt.IsZero() {
			t.Errorf("attempt %d of %q by %s is still open after every intent ended", a.Number, a.IntentID, a.HolderID)
		}
	}
	c.checkGatewayCallsRecorded(instances...)
}

// 5. Leader picks up follower-submitted intents via schedule refresh: the
// follower's engine is not leading, so nothing tells the leader about these
// intents but its refresh of the changes in the database (the lease epoch
// stays 1: no rebuild happened). Submissions race so that several share a
// millisecond, which the composite cursor must not skip.
func TestHARefreshPicksUpFollowerSubmittedIntents(t *testing.T) {
	c := newHACluster(t, gatewaysim.Config{})
	lead := c.start("sm-01")
	c.waitLeader(lead)
	follower := c.start("sm-02")
	haWaitAcquireAttempts(t, 1, follower)

	// A first wave no larger than the engine's MaxInFlight, so that the
	// time to the first attempt measures the refresh and not a queue.
	timed := haIDs("timed", executor.DefaultMaxInFlight/2)
	haSubmitConcurrently(t, follower, timed)
	intents := c.audit.waitTerminal(t, timed)
	first := map[string]auditAttempt{}
	for _, a := range c.audit.attempts(t) {
		if a.Number == 1 {
			first[a.IntentID] = a
		}
	}
	// "No later than the next refresh cycle", with slack for a loaded
	// machine: far below what a missed intent would cost (forever).
	bound := haRefreshInterval + time.Second
	var latest time.Duration
	for _, id := range timed {
		a, ok := first[id]
		if !ok {
			t.Fatalf("intent %q is terminal without a first attempt", id)
		}
		latest = max(latest, a.StartedAt.Sub(intents[id].CreatedAt))
	}
	if latest > bound {
		t.Errorf("a follower-submitted intent waited %s for its first attempt, more than refresh interval + 1s = %s", latest, bound)
	}
	t.Logf("longest wait from follower submission to first attempt: %s", latest)

	// A larger burst: every intent is found, none twice.
	burst := haIDs("burst", 100)
	haSubmitConcurrently(t, follower, burst)
	c.audit.waitTerminal(t, burst)

	if l := c.lease(); l.HolderID != lead.holderID || l.Epoch != 1 {
		t.Fatalf("lease = %+v, want %s still at epoch 1 (no rebuild)", l, lead.holderID)
	}
	for _, a := range c.audit.attempts(t) {
		if a.HolderID != lead.holderID {
			t.Errorf("attempt %d of %q by %s, want the leader %s", a.Number, a.IntentID, a.HolderID, lead.holderID)
		}
	}
	if n := follower.calls.count(); n != 0 {
		t.Errorf("the follower called the gateway %d times", n)
	}
	c.checkGatewayCallsRecorded(lead, follower)
}

// haSubmitConcurrently submits every id through in at once.
func haSubmitConcurrently(t *testing.T, in *haInstance, all []string) {
	t.Helper()
	var wg sync.WaitGroup
	for i, id := range all {
		wg.Go(func() { in.submit(t, id, haTarget(i)) })
	}
	wg.Wait()
}

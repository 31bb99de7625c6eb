package console

import (
	"sync"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// ActivityWindow is how far back the overview's rates reach.
const ActivityWindow = 5 * time.Minute

// Activity is a ports.Metrics that keeps a small in-process ring of
// per-second counters for the overview (intake, attempts, completions,
// first-attempt lateness) and forwards every event to the next Metrics
// (Prometheus), so the console needs no scraper. It sees this instance's
// events only: intake of this instance, attempts while it leads.
type Activity struct {
	next  ports.Metrics
	clock ports.Clock

	mu      sync.Mutex
	buckets [int(ActivityWindow / time.Second)]activityBucket
}

// activityBucket is one second of events; sec tells which second it holds,
// so a bucket left over from a lap ago reads as empty.
type activityBucket struct {
	sec                           int64
	intake, attempts, completions int64
	latenessCount                 int64
	latenessSum, latenessMax      time.Duration
}

var _ ports.Metrics = (*Activity)(nil)

// NewActivity returns an Activity that forwards to next (nil: none).
func NewActivity(next ports.Metrics, clock ports.Clock) *Activity {
	if next == nil {
		next = ports.NopMetrics{}
	}
	return &Activity{next: next, clock: clock}
}

// record adds to the bucket of the current second.
func (a *Activity) record(f func(b *activityBucket)) {
	sec := a.clock.Now().Unix()
	a.mu.Lock()
	defer a.mu.Unlock()
	b := &a.buckets[sec%int64(len(a.buckets))]
	if b.sec != sec {
		*b = activityBucket{sec: sec}
	}
	f(b)
}

func (a *Activity) IntentCreated(target string) {
	a.record(func(b *activityBucket) { b.intake++ })
	a.next.IntentCreated(target)
}

func (a *Activity) IntentCompleted(target string, status core.IntentStatus, reason string) {
	a.record(func(b *activityBucket) { b.completions++ })
	a.next.IntentCompleted(target, status, reason)
}

func (a *Activity) AttemptFinished(gt core.GatewayType, result string, latency time.Duration) {
	a.record(func(b *activityBucket) { b.attempts++ })
	a.next.AttemptFinished(gt, result, latency)
}

func (a *Activity) FirstAttemptLateness(d time.Duration) {
	a.record(func(b *activityBucket) {
		b.latenessCount++
		b.latenessSum += d
		b.latenessMax = max(b.latenessMax, d)
	})
	a.next.FirstAttemptLateness(d)
}

func (a *Activity) InFlightAttempts(n int)               { a.next.InFlightAttempts(n) }
func (a *Activity) ScheduleSize(n int)                   { a.next.ScheduleSize(n) }
func (a *Activity) Leadership(leader bool, epoch int64)  { a.next.Leadership(leader, epoch) }
func (a *Activity) FencedWrite()                         { a.next.FencedWrite() }
func (a *Activity) IntentPossiblyAccepted(target string) { a.next.IntentPossiblyAccepted(target) }
func (a *Activity) InDoubtLookup(gt core.GatewayType, answer string) {
	a.next.InDoubtLookup(gt, answer)
}
func (a *Activity) IntentAcceptedAfterDeadline(target string) {
	a.next.IntentAcceptedAfterDeadline(target)
}

// ActivitySnapshot is the window as series, oldest second first.
type ActivitySnapshot struct {
	End         time.Time
	Intake      []int64
	Attempts    []int64
	Completions []int64
	// LatenessAvg and LatenessMax summarize first-attempt lateness over the
	// last minute; LatenessCount is how many first attempts that covers.
	LatenessAvg, LatenessMax time.Duration
	LatenessCount            int64
}

// Snapshot returns the last ActivityWindow, second by second, ending with
// the current (still counting) second.
func (a *Activity) Snapshot() ActivitySnapshot {
	end := a.clock.Now().Unix()
	n := len(a.buckets)
	snap := ActivitySnapshot{End: time.Unix(end, 0).UTC(),
		Intake: make([]int64, n), Attempts: make([]int64, n), Completions: make([]int64, n)}
	a.mu.Lock()
	defer a.mu.Unlock()
	var latenessSum time.Duration
	for i := range n {
		sec := end - int64(n-1-i)
		b := a.buckets[sec%int64(n)]
		if b.sec != sec {
			continue
		}
		snap.Intake[i], snap.Attempts[i], snap.Completions[i] = b.intake, b.attempts, b.completions
		if end-sec < 60 {
			snap.LatenessCount += b.latenessCount
			latenessSum += b.latenessSum
			snap.LatenessMax = max(snap.LatenessMax, b.latenessMax)
		}
	}
	if snap.LatenessCount > 0 {
		snap.LatenessAvg = latenessSum / time.Duration(snap.LatenessCount)
	}
	return snap
}

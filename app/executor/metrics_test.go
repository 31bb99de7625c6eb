package executor_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// recordingMetrics keeps every event, for assertions on what operators see.
type recordingMetrics struct {
	mu        sync.Mutex
	completed []string
	attempts  []string
	latencies []time.Duration
	lateness  []time.Duration
	inFlight  []int
	fenced    int
	// possiblyAccepted and lookups record the in-doubt events.
	possiblyAccepted []string
	lookups          []string
	// lateAcceptances records the intents accepted after their deadline.
	lateAcceptances []string
	// protection records the gateway protection's events (protect_test.go).
	protection []string
	// changed is closed and replaced on every event, for await.
	changed chan struct{}
}

var _ ports.Metrics = (*recordingMetrics)(nil)

func newRecordingMetrics() *recordingMetrics {
	return &recordingMetrics{changed: make(chan struct{})}
}

// record runs f under the lock and wakes await callers.
func (m *recordingMetrics) record(f func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f()
	close(m.changed)
	m.changed = make(chan struct{})
}

// await blocks until cond, evaluated under the lock, holds.
func (m *recordingMetrics) await(ctx context.Context, cond func(*recordingMetrics) bool) error {
	for {
		m.mu.Lock()
		ok, changed := cond(m), m.changed
		m.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// IntentCreated is intake's event: the executor creates no intent, and
// these tests store theirs without intake (see submit).
func (m *recordingMetrics) IntentCreated(string) {}

func (m *recordingMetrics) IntentCompleted(target string, s core.IntentStatus, reason string) {
	m.record(func() { m.completed = append(m.completed, fmt.Sprintf("%s %s %s", target, s, reason)) })
}

func (m *recordingMetrics) AttemptFinished(gt core.GatewayType, result string, latency time.Duration) {
	m.record(func() {
		m.attempts = append(m.attempts, fmt.Sprintf("%s %s", gt, result))
		m.latencies = append(m.latencies, latency)
	})
}

func (m *recordingMetrics) FirstAttemptLateness(d time.Duration) {
	m.record(func() { m.lateness = append(m.lateness, d) })
}

func (m *recordingMetrics) InFlightAttempts(n int) {
	m.record(func() { m.inFlight = append(m.inFlight, n) })
}

func (m *recordingMetrics) ScheduleSize(int)       {}
func (m *recordingMetrics) Leadership(bool, int64) {}

func (m *recordingMetrics) FencedWrite() {
	m.record(func() { m.fenced++ })
}

func (m *recordingMetrics) IntentPossiblyAccepted(target string) {
	m.record(func() { m.possiblyAccepted = append(m.possiblyAccepted, target) })
}

func (m *recordingMetrics) IntentAcceptedAfterDeadline(target string) {
	m.record(func() { m.lateAcceptances = append(m.lateAcceptances, target) })
}

func (m *recordingMetrics) InDoubtLookup(gt core.GatewayType, answer string) {
	m.record(func() { m.lookups = append(m.lookups, fmt.Sprintf("%s %s", gt, answer)) })
}

func (m *recordingMetrics) maxInFlight() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, v := range m.inFlight {
		n = max(n, v)
	}
	return n
}

// inFlightReports returns how many in-flight reports were made so far and
// the last one (0 before any).
func (m *recordingMetrics) inFlightReports() (n, last int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.inFlight) == 0 {
		return 0, 0
	}
	return len(m.inFlight), m.inFlight[len(m.inFlight)-1]
}

func (m *recordingMetrics) firstAttemptLateness() []time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]time.Duration(nil), m.lateness...)
}

func (m *recordingMetrics) snapshot() (completed, attempts []string, fenced int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.completed...), append([]string(nil), m.attempts...), m.fenced
}

package prometheus

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.ProtectionMetrics = (*Metrics)(nil)

// protectionMetrics are the gateway protection's collectors.
type protectionMetrics struct {
	breakerState       *prometheus.GaugeVec
	breakerTransitions *prometheus.CounterVec
	deferred           *prometheus.CounterVec
	limited            *prometheus.CounterVec
	paused             prometheus.Gauge
}

// breakerStates lists every state, so the state gauge has one series per
// state with exactly one at 1.
var breakerStates = []core.BreakerState{core.BreakerClosed, core.BreakerOpen, core.BreakerHalfOpen}

func newProtectionMetrics() protectionMetrics {
	return protectionMetrics{
		breakerState: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "gateway_breaker_state",
			Help: "1 for the current circuit breaker state of each gateway URL the leader called (closed, open, half_open), 0 for the others.",
		}, []string{"gateway_url", "state"}),
		breakerTransitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "gateway_breaker_transitions_total",
			Help: "Circuit breaker state changes by gateway URL, from and to.",
		}, []string{"gateway_url", "from", "to"}),
		deferred: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "attempts_deferred_total",
			Help: "Due attempts not made (no try spent) because the gateway's breaker was open or the gateway paused, by gateway URL and reason.",
		}, []string{"gateway_url", "reason"}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "gateway_calls_limited_total",
			Help: "Due attempts held back in the schedule by a per-gateway limit (max_in_flight, rate) or a half-open probe (probing), by gateway URL.",
		}, []string{"gateway_url", "limit"}),
		paused: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "gateways_paused",
			Help: "Gateway pauses (by type or URL) in force.",
		}),
	}
}

func (p protectionMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{p.breakerState, p.breakerTransitions, p.deferred, p.limited, p.paused}
}

// BreakerTransition implements ports.ProtectionMetrics.
func (m *Metrics) BreakerTransition(url string, from, to core.BreakerState) {
	m.protection.breakerTransitions.WithLabelValues(url, string(from), string(to)).Inc()
	for _, s := range breakerStates {
		v := 0.0
		if s == to {
			v = 1
		}
		m.protection.breakerState.WithLabelValues(url, string(s)).Set(v)
	}
}

// AttemptDeferred implements ports.ProtectionMetrics.
func (m *Metrics) AttemptDeferred(url, reason string) {
	m.protection.deferred.WithLabelValues(url, reason).Inc()
}

// CallLimited implements ports.ProtectionMetrics.
func (m *Metrics) CallLimited(url, limit string) {
	m.protection.limited.WithLabelValues(url, limit).Inc()
}

// GatewaysPaused implements ports.ProtectionMetrics.
func (m *Metrics) GatewaysPaused(n int) { m.protection.paused.Set(float64(n)) }

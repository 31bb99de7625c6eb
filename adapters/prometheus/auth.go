package prometheus

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.AuthMetrics = (*Metrics)(nil)

// authMetrics are the authentication throttle's collectors. The surface
// label has two values (api, console); client addresses are never labels.
type authMetrics struct {
	failures  *prometheus.CounterVec
	throttled *prometheus.CounterVec
}

func newAuthMetrics() authMetrics {
	return authMetrics{
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "auth_failures_total",
			Help: "Keys presented that are not configured, by surface (api, console).",
		}, []string{"surface"}),
		throttled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "auth_throttled_total",
			Help: "Requests refused without looking at their key because their client address presented too many unknown keys, by surface.",
		}, []string{"surface"}),
	}
}

func (a authMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{a.failures, a.throttled}
}

// AuthFailed implements ports.AuthMetrics.
func (m *Metrics) AuthFailed(surface string) { m.auth.failures.WithLabelValues(surface).Inc() }

// AuthThrottled implements ports.AuthMetrics.
func (m *Metrics) AuthThrottled(surface string) { m.auth.throttled.WithLabelValues(surface).Inc() }

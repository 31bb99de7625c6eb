// Package prometheus implements ports.Metrics with client_golang and serves
// the registry on /metrics. It uses a registry of its own (not the global
// default) so tests and several in-process instances never collide.
package prometheus

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

const namespace = "submission_manager"

// Metrics holds every SubmissionManager collector. Its methods are the
// ports.Metrics events; all are safe for concurrent use and allocation-light.
type Metrics struct {
	registry *prometheus.Registry

	intentsCreated   *prometheus.CounterVec
	intentsCompleted *prometheus.CounterVec
	attempts         *prometheus.CounterVec
	attemptLatency   *prometheus.HistogramVec
	firstLateness    prometheus.Histogram
	inFlight         prometheus.Gauge
	scheduleSize     prometheus.Gauge
	leader           prometheus.Gauge
	leaseEpoch       prometheus.Gauge
	fencedWrites     prometheus.Counter
	possiblyAccepted *prometheus.CounterVec
	lateAcceptances  *prometheus.CounterVec
	inDoubtLookups   *prometheus.CounterVec
	httpRequests     *prometheus.CounterVec
	httpDuration     *prometheus.HistogramVec
	protection       protectionMetrics
	auth             authMetrics
}

var (
	_ ports.Metrics = (*Metrics)(nil)
)

// latencyBuckets spans a fast simulator on loopback (sub-millisecond) to a
// gateway at its 10 s timeout.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// New returns metrics registered on a fresh registry, together with the Go
// runtime and process collectors operators expect.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		intentsCreated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "intents_created_total",
			Help: "Intents stored, by submission target (idempotent repeats are not counted).",
		}, []string{"submission_target"}),
		intentsCompleted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "intents_completed_total",
			Help: "Intents that reached a terminal status, by target, status and reason (final outcome reason or exhausted reason).",
		}, []string{"submission_target", "status", "reason"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "attempts_total",
			Help: "Finished attempts by gateway type and result (accepted, rejected, error).",
		}, []string{"gateway_type", "result"}),
		attemptLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "attempt_duration_seconds",
			Help:    "Gateway call duration of finished attempts, by gateway type.",
			Buckets: latencyBuckets,
		}, []string{"gateway_type"}),
		firstLateness: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "first_attempt_lateness_seconds",
			Help:    "First attempt start minus intent creation.",
			Buckets: latencyBuckets,
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "attempts_in_flight",
			Help: "Attempts in flight on this instance: reserved and not yet recorded (at most --max-in-flight of them calling a gateway).",
		}),
		scheduleSize: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "schedule_size",
			Help: "Pending intents in this leader's schedule (0 on followers).",
		}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "leader",
			Help: "1 while this instance holds the executor lease, else 0.",
		}),
		leaseEpoch: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "lease_epoch",
			Help: "Epoch of the lease this instance last held.",
		}),
		fencedWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "fenced_writes_total",
			Help: "Execution-state writes refused by the lease fence (each one drops leadership).",
		}),
		possiblyAccepted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "intents_possibly_accepted_total",
			Help: "Intents flagged possiblyAccepted: a retry after an attempt in doubt got duplicate_reference, so the gateway may have accepted an earlier attempt whose answer was lost.",
		}, []string{"submission_target"}),
		lateAcceptances: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "intents_accepted_after_deadline_total",
			Help: "Intents the gateway accepted at or after their acceptance deadline: exhausted (deadline_exceeded) as the spec says, yet the gateway has the message; flagged acceptedAfterDeadline and never resubmitted in bulk.",
		}, []string{"submission_target"}),
		inDoubtLookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "in_doubt_lookups_total",
			Help: "Gateway lookups of attempts in doubt, by gateway type and answer (known, never_received, unsupported).",
		}, []string{"gateway_type", "answer"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "http_requests_total",
			Help: "HTTP requests by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "http_request_duration_seconds",
			Help:    "HTTP request duration by route pattern and method.",
			Buckets: latencyBuckets,
		}, []string{"route", "method"}),
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.intentsCreated, m.intentsCompleted, m.attempts, m.attemptLatency, m.firstLateness,
		m.inFlight, m.scheduleSize, m.leader, m.leaseEpoch, m.fencedWrites,
		m.possiblyAccepted, m.lateAcceptances, m.inDoubtLookups,
		m.httpRequests, m.httpDuration,
	)
	m.protection = newProtectionMetrics()
	m.registry.MustRegister(m.protection.collectors()...)
	m.auth = newAuthMetrics()
	m.registry.MustRegister(m.auth.collectors()...)
	return m
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// IntentCreated implements ports.Metrics.
func (m *Metrics) IntentCreated(target string) { m.intentsCreated.WithLabelValues(target).Inc() }

// IntentCompleted implements ports.Metrics.
func (m *Metrics) IntentCompleted(target string, status core.IntentStatus, reason string) {
	m.intentsCompleted.WithLabelValues(target, string(status), reason).Inc()
}

// AttemptFinished implements ports.Metrics.
func (m *Metrics) AttemptFinished(gatewayType core.GatewayType, result string, latency time.Duration) {
	m.attempts.WithLabelValues(string(gatewayType), result).Inc()
	m.attemptLatency.WithLabelValues(string(gatewayType)).Observe(latency.Seconds())
}

// FirstAttemptLateness implements ports.Metrics.
func (m *Metrics) FirstAttemptLateness(d time.Duration) { m.firstLateness.Observe(d.Seconds()) }

// InFlightAttempts implements ports.Metrics.
func (m *Metrics) InFlightAttempts(n int) { m.inFlight.Set(float64(n)) }

// ScheduleSize implements ports.Metrics.
func (m *Metrics) ScheduleSize(n int) { m.scheduleSize.Set(float64(n)) }

// Leadership implements ports.Metrics.
func (m *Metrics) Leadership(leader bool, epoch int64) {
	if leader {
		m.leader.Set(1)
	} else {
		m.leader.Set(0)
	}
	m.leaseEpoch.Set(float64(epoch))
}

// FencedWrite implements ports.Metrics.
func (m *Metrics) FencedWrite() { m.fencedWrites.Inc() }

// IntentPossiblyAccepted implements ports.Metrics.
func (m *Metrics) IntentPossiblyAccepted(target string) {
	m.possiblyAccepted.WithLabelValues(target).Inc()
}

// IntentAcceptedAfterDeadline implements ports.Metrics.
func (m *Metrics) IntentAcceptedAfterDeadline(target string) {
	m.lateAcceptances.WithLabelValues(target).Inc()
}

// InDoubtLookup implements ports.Metrics.
func (m *Metrics) InDoubtLookup(gt core.GatewayType, answer string) {
	m.inDoubtLookups.WithLabelValues(string(gt), answer).Inc()
}

// Middleware counts HTTP requests by the route pattern of routes that matches
// them (never the raw path, which would let clients create unbounded label
// values) and observes their duration. routes is asked for the pattern up
// front because middlewares between this one and the mux may clone the
// request, hiding the pattern the mux records on its own copy.
func (m *Metrics) Middleware(routes *http.ServeMux, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		route := "unmatched"
		if routes != nil {
			if _, pattern := routes.Handler(r); pattern != "" {
				route = pattern
			}
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		method := methodLabel(r.Method)
		m.httpRequests.WithLabelValues(route, method, strconv.Itoa(rec.status)).Inc()
		m.httpDuration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
	})
}

// methodLabel bounds the method label to the standard methods: clients
// choose the method, and any other value would be a new series, before
// authentication, for as long as the process lives.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return method
	}
	return "other"
}

// statusRecorder remembers the status code a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wroteHeader = true
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

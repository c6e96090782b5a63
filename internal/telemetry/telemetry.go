// Package telemetry holds codeport's Prometheus metrics, so that every
// adapter and the HTTP server report under the same names (all prefixed
// codeport_) whichever of them does the work.
package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the metrics an adapter records. A nil *Metrics records
// nothing, so adapters need no branches when metrics are off.
type Metrics struct {
	sessionsLive  prometheus.Gauge
	executions    *prometheus.CounterVec
	execDuration  *prometheus.HistogramVec
	instanceStart prometheus.Histogram
	reclaimed     *prometheus.CounterVec
	poolTakes     *prometheus.CounterVec
}

// New creates the metrics and registers them with reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		sessionsLive: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "codeport_sessions_live",
			Help: "Sessions currently alive.",
		}),
		executions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codeport_executions_total",
			Help: "Execute calls that ran, by tool kind and outcome.",
		}, []string{"tool", "outcome"}),
		execDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "codeport_execution_duration_seconds",
			Help:    "Time spent executing one call, by tool kind.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"tool"}),
		instanceStart: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "codeport_instance_start_duration_seconds",
			Help:    "Time to start one interpreter instance until it is ready for its first call.",
			Buckets: []float64{.01, .025, .05, .1, .15, .2, .3, .5, 1, 2, 5},
		}),
		reclaimed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codeport_sessions_reclaimed_total",
			Help: "Sessions reclaimed by the backend, by reason (idle, lifetime).",
		}, []string{"reason"}),
		poolTakes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codeport_pool_takes_total",
			Help: "Sessions created from the warm pool (hit) or with a cold start (miss).",
		}, []string{"result"}),
	}
	for _, c := range []prometheus.Collector{m.sessionsLive, m.executions, m.execDuration, m.instanceStart, m.reclaimed, m.poolTakes} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// SessionOpened and SessionClosed track codeport_sessions_live.
func (m *Metrics) SessionOpened() {
	if m != nil {
		m.sessionsLive.Inc()
	}
}

// SessionClosed is the counterpart of SessionOpened.
func (m *Metrics) SessionClosed() {
	if m != nil {
		m.sessionsLive.Dec()
	}
}

// Executed records one call that ran.
func (m *Metrics) Executed(tool, outcome string, seconds float64) {
	if m != nil {
		m.executions.WithLabelValues(tool, outcome).Inc()
		m.execDuration.WithLabelValues(tool).Observe(seconds)
	}
}

// InstanceStarted records the start-up time of one interpreter instance.
func (m *Metrics) InstanceStarted(seconds float64) {
	if m != nil {
		m.instanceStart.Observe(seconds)
	}
}

// Reclaimed records a session the backend reclaimed on its own.
func (m *Metrics) Reclaimed(reason string) {
	if m != nil {
		m.reclaimed.WithLabelValues(reason).Inc()
	}
}

// PoolTaken records whether a session found a warm interpreter waiting.
func (m *Metrics) PoolTaken(hit bool) {
	if m != nil {
		result := "miss"
		if hit {
			result = "hit"
		}
		m.poolTakes.WithLabelValues(result).Inc()
	}
}

// PoolTakes is the counter of pool takes with the given result ("hit" or
// "miss"), for tests.
func (m *Metrics) PoolTakes(result string) prometheus.Counter {
	return m.poolTakes.WithLabelValues(result)
}

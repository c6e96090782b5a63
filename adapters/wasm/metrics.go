package wasm

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the adapter's own: what the runtime does besides serving
// calls (each call is counted by the port's observers, the same way for
// every adapter). A nil *metrics records nothing, so the adapter needs no
// branches when metrics are off.
type metrics struct {
	sessionsLive  prometheus.Gauge
	instanceStart prometheus.Histogram
	reclaimed     *prometheus.CounterVec
	poolTakes     *prometheus.CounterVec
	hibernated    prometheus.Gauge
	hibernations  prometheus.Counter
	wakes         prometheus.Histogram
}

// newMetrics creates the metrics and registers them with reg.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		sessionsLive: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "codeport_sessions_live",
			Help: "Sessions currently alive.",
		}),
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
	m.hibernated = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "codeport_sessions_hibernated",
		Help: "Sessions hibernated: saved to disk, their memory released (counted in codeport_sessions_live too).",
	})
	m.hibernations = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "codeport_hibernations_total",
		Help: "Sessions hibernated, including at shutdown, or found hibernated at start.",
	})
	m.wakes = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "codeport_session_wake_duration_seconds",
		Help:    "Time to restore a hibernated session at its next call.",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	})
	for _, c := range []prometheus.Collector{m.sessionsLive, m.instanceStart, m.reclaimed, m.poolTakes, m.hibernated, m.hibernations, m.wakes} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// SessionOpened and SessionClosed track codeport_sessions_live, which the
// adapter keeps because only it knows of the sessions it reclaims.
func (m *metrics) SessionOpened() {
	if m != nil {
		m.sessionsLive.Inc()
	}
}

// SessionClosed is the counterpart of SessionOpened.
func (m *metrics) SessionClosed() {
	if m != nil {
		m.sessionsLive.Dec()
	}
}

// InstanceStarted records the start-up time of one interpreter instance.
func (m *metrics) InstanceStarted(seconds float64) {
	if m != nil {
		m.instanceStart.Observe(seconds)
	}
}

// Reclaimed records a session the backend reclaimed on its own.
func (m *metrics) Reclaimed(reason string) {
	if m != nil {
		m.reclaimed.WithLabelValues(reason).Inc()
	}
}

// PoolTaken records whether a session found a warm interpreter waiting.
func (m *metrics) PoolTaken(hit bool) {
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
func (m *metrics) PoolTakes(result string) prometheus.Counter {
	return m.poolTakes.WithLabelValues(result)
}

// Hibernated records sessions going to sleep (+1) or leaving it (-1).
func (m *metrics) Hibernated(delta int) {
	if m != nil {
		m.hibernated.Add(float64(delta))
		if delta > 0 {
			m.hibernations.Add(float64(delta))
		}
	}
}

// Woken records the restore of a hibernated session.
func (m *metrics) Woken(seconds float64) {
	if m != nil {
		m.wakes.Observe(seconds)
	}
}

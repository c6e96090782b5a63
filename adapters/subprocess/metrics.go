package subprocess

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the adapter's own (each call is counted by the port's
// observers, the same way for every adapter); the workers' metrics stay in
// the workers. They are always recorded and registered only when a registry
// is configured.
type metrics struct {
	live     prometheus.Gauge
	restarts *prometheus.CounterVec
	poolWait prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		live: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "codeport_workers_live",
			Help: "Worker processes alive (idle or hosting sessions).",
		}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codeport_worker_restarts_total",
			Help: "Worker processes ended and replaced, by cause (recycled, evicted, deadline, cancel, oom, killed, crashed, start).",
		}, []string{"cause"}),
		poolWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "codeport_worker_pool_wait_seconds",
			Help:    "Time CreateSession waited for a worker (0 when an idle one was ready; a start when none was).",
			Buckets: []float64{.0001, .0005, .001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.live, m.restarts, m.poolWait} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

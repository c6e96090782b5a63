package telemetry

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/port"
)

// Observer counts the calls a port serves. It implements port.Observer;
// give it to an adapter's constructor (or binding.Options) with
// port.WithObserver.
type Observer struct {
	executions   *prometheus.CounterVec
	execDuration *prometheus.HistogramVec
	refusals     *prometheus.CounterVec
}

var _ port.Observer = (*Observer)(nil)

// NewObserver creates the metrics and registers them with reg:
//
//	codeport_executions_total{tool, outcome}        Execute calls that ran
//	codeport_execution_duration_seconds{tool}        and how long each took
//	codeport_call_errors_total{op, code}            calls that could not run,
//	                                                 by port.ErrorCode
func NewObserver(reg prometheus.Registerer) (*Observer, error) {
	o := &Observer{
		executions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codeport_executions_total",
			Help: "Execute calls that ran, by tool kind and outcome.",
		}, []string{"tool", "outcome"}),
		execDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "codeport_execution_duration_seconds",
			Help:    "Time spent executing one call, by tool kind.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"tool"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codeport_call_errors_total",
			Help: "Calls that could not run, by operation and error code (port.ErrorCode; \"other\" for none).",
		}, []string{"op", "code"}),
	}
	for _, c := range []prometheus.Collector{o.executions, o.execDuration, o.refusals} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// StartCall implements port.Observer.
func (o *Observer) StartCall(ctx context.Context, _ *port.Call) context.Context { return ctx }

// EndCall implements port.Observer.
func (o *Observer) EndCall(_ context.Context, c *port.Call) {
	if c.Err != nil {
		code := port.ErrorCode(c.Err)
		if code == "" {
			code = "other"
		}
		o.refusals.WithLabelValues(string(c.Op), code).Inc()
		return
	}
	if c.Op == port.OpExecute {
		o.executions.WithLabelValues(string(c.Tool), string(c.Outcome)).Inc()
		o.execDuration.WithLabelValues(string(c.Tool)).Observe(c.Duration.Seconds())
	}
}

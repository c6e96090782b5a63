package server

import (
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// WithTracerProvider makes a span per request with tp (OpenTelemetry's
// HTTP server conventions), continuing the trace of a W3C traceparent
// header the client sent. The span is named by the route pattern
// ("POST /sessions/{id}/exec"), never by the raw path, so session ids do
// not multiply span names; its context reaches the port, so a tracing
// observer's call spans (package telemetry/tracing) are its children.
// GET /healthz and GET /metrics, which probes and scrapers call all the
// time, are not traced. Without this option, or with a nil tp, nothing is
// traced and nothing is added to a request's path through the handler.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tracerProvider = tp }
}

// traced wraps h in the request spans of WithTracerProvider.
func traced(h http.Handler, tp trace.TracerProvider) http.Handler {
	// otelhttp names the span by the route pattern once the handler has
	// matched it, but records http.route only when the pattern is known
	// before, which it never is here.
	routed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if _, route, ok := strings.Cut(r.Pattern, " "); ok {
			trace.SpanFromContext(r.Context()).SetAttributes(attribute.String("http.route", route))
		} else if r.Pattern != "" {
			trace.SpanFromContext(r.Context()).SetAttributes(attribute.String("http.route", r.Pattern))
		}
	})
	return otelhttp.NewHandler(routed, "codeport",
		otelhttp.WithTracerProvider(tp),
		// W3C trace context, whatever the process's global propagator.
		otelhttp.WithPropagators(propagation.TraceContext{}),
		// The handler's metrics are Prometheus'; otelhttp's would go to
		// a global meter provider otherwise.
		otelhttp.WithMeterProvider(noop.NewMeterProvider()),
		otelhttp.WithFilter(func(r *http.Request) bool {
			return r.URL.Path != "/healthz" && r.URL.Path != "/metrics"
		}),
	)
}

package httpadapter

import (
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/codeport/codeport/port"
)

// WithTracerProvider makes a client span per request to the backend with
// tp, named by the contract's route ("POST /sessions/{id}/exec"), from the
// request until its response's headers arrive. Its attributes are the
// method, the route, the backend's host and port and the response's
// status, and never the request's query, which holds workspace paths.
// (otelhttp's client transport records the whole URL, query included,
// which is why the adapter makes its spans itself.)
//
// With or without it, every request carries the trace of the call's
// context in W3C trace context headers (traceparent, tracestate), so a
// backend that traces, `codeport serve` among them, continues it: under
// the port's span when the port has a tracing observer
// (telemetry/tracing), under this client span when there is one. A nil tp
// makes no spans.
func (c Config) WithTracerProvider(tp trace.TracerProvider) Config { c.tracerProvider = tp; return c }

// tracerScope is the instrumentation scope of the adapter's spans.
const tracerScope = "github.com/codeport/codeport/adapters/http"

// traceRequest starts the client span of c's request, when the adapter
// traces, and puts the trace context in the request's headers. The span is
// nil when the adapter does not trace.
func (a *adapter) traceRequest(req *http.Request, c *call) (*http.Request, trace.Span) {
	ctx := req.Context()
	var span trace.Span
	if a.tracer != nil {
		_, tmpl, _ := strings.Cut(c.route, " ")
		attrs := []attribute.KeyValue{
			attribute.String("http.request.method", c.method),
			attribute.String("url.template", tmpl),
			attribute.String("server.address", req.URL.Hostname()),
		}
		if p, err := strconv.Atoi(req.URL.Port()); err == nil {
			attrs = append(attrs, attribute.Int("server.port", p))
		}
		ctx, span = a.tracer.Start(ctx, c.route, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		req = req.WithContext(ctx)
	}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	return req, span
}

// endSpan ends a request's span with the response's status, or the
// error's code when there was no response.
func endSpan(span trace.Span, resp *http.Response, err error) {
	if span == nil {
		return
	}
	switch {
	case err != nil:
		code := port.ErrorCode(err)
		if code == "" {
			code = "other"
		}
		span.SetAttributes(attribute.String("error.type", code))
		span.SetStatus(codes.Error, code)
	default:
		span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
		if resp.StatusCode >= 500 {
			span.SetAttributes(attribute.String("error.type", strconv.Itoa(resp.StatusCode)))
			span.SetStatus(codes.Error, "")
		}
	}
	span.End()
}

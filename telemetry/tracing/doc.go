// Package tracing turns the calls a port serves into OpenTelemetry spans,
// the same way whichever adapter serves them: like the metrics of package
// telemetry, it is a port.Observer, so every adapter gets it once, at the
// portable layer.
//
// Each call is one span named by its operation ("create_session",
// "execute", "put_file", ...), child of the span in the call's context
// (the request span of package server, when it traces), with these
// attributes: codeport.op, codeport.adapter, codeport.session_id, and
// for an execution codeport.tool, codeport.timeout_ms, codeport.outcome,
// codeport.return_code, codeport.state_lost, codeport.output_truncated and
// codeport.output_bytes; codeport.file_bytes for a file transfer;
// codeport.duration_ms; codeport.error_code for a call that could not run.
// Never code, commands, editor text, output, paths or file contents: a
// port.Call does not hold them.
//
// The package uses only the OpenTelemetry API and reads no global: the
// caller passes the TracerProvider.
//
//	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter))
//	defer tp.Shutdown(context.WithoutCancel(ctx))
//	p, err := wasm.New(wasm.NewConfig(), port.WithObserver(tracing.NewObserver(tp)))
//
// The adapters that call further carry the trace on in W3C trace context
// (traceparent and tracestate): adapters/http in the headers of its
// requests (httpadapter.Config.WithTracerProvider adds a client span per
// request), adapters/subprocess in the metadata of its calls to a worker.
// package server's WithTracerProvider makes a span per request, named by
// its route pattern, that continues a trace its client started. Package
// tracingenv builds a provider from the standard OTEL_* environment
// variables, as `codeport serve` does.
package tracing

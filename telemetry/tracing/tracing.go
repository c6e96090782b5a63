package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/codeport/codeport/port"
)

// ScopeName is the instrumentation scope of the spans this package makes.
const ScopeName = "github.com/codeport/codeport/telemetry/tracing"

// The attributes of a call's span. Only these are ever set: a call's code,
// command, editor text, output, paths and file contents are not in a
// port.Call, so they cannot reach a span.
const (
	AttrOp              = attribute.Key("codeport.op")
	AttrAdapter         = attribute.Key("codeport.adapter")
	AttrSessionID       = attribute.Key("codeport.session_id")
	AttrTool            = attribute.Key("codeport.tool")
	AttrTimeoutMS       = attribute.Key("codeport.timeout_ms")
	AttrDurationMS      = attribute.Key("codeport.duration_ms")
	AttrOutcome         = attribute.Key("codeport.outcome")
	AttrReturnCode      = attribute.Key("codeport.return_code")
	AttrStateLost       = attribute.Key("codeport.state_lost")
	AttrOutputTruncated = attribute.Key("codeport.output_truncated")
	AttrOutputBytes     = attribute.Key("codeport.output_bytes")
	AttrFileBytes       = attribute.Key("codeport.file_bytes")
	AttrErrorCode       = attribute.Key("codeport.error_code")
)

// Observer makes one span per call a port serves. It implements
// port.Observer; give it to an adapter's constructor with
// port.WithObserver (binding.Options.TracerProvider does so for an adapter
// bound from configuration).
type Observer struct {
	tracer trace.Tracer
}

var _ port.Observer = (*Observer)(nil)

// NewObserver returns an observer whose spans tp makes. A nil tp makes
// none: the observer is then free, for a caller that wires it in
// unconditionally. No global provider is ever consulted.
func NewObserver(tp trace.TracerProvider) *Observer {
	if tp == nil {
		return &Observer{}
	}
	return &Observer{tracer: tp.Tracer(ScopeName)}
}

// spanKey finds an observer's span in a call's context: looked up by the
// observer, not with trace.SpanFromContext, because an observer added
// after this one may put a span of its own there.
type spanKey struct{ o *Observer }

// StartCall implements port.Observer: it starts the call's span, named by
// the operation ("execute", "create_session", ...), as a child of the span
// in ctx (a server's request span, say). The returned context carries it,
// so an adapter that calls further (a remote backend, a worker process)
// continues the trace.
func (o *Observer) StartCall(ctx context.Context, c *port.Call) context.Context {
	if o.tracer == nil {
		return ctx
	}
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, AttrOp.String(string(c.Op)), AttrAdapter.String(c.Adapter))
	if c.SessionID != "" {
		attrs = append(attrs, AttrSessionID.String(c.SessionID))
	}
	if c.Tool != "" {
		attrs = append(attrs, AttrTool.String(string(c.Tool)))
	}
	if c.Timeout > 0 {
		attrs = append(attrs, AttrTimeoutMS.Int64(c.Timeout.Milliseconds()))
	}
	ctx, span := o.tracer.Start(ctx, string(c.Op), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(c.Started), trace.WithAttributes(attrs...))
	return context.WithValue(ctx, spanKey{o}, span)
}

// EndCall implements port.Observer: it records how the call ended and ends
// its span. An error is recorded by its code (port.ErrorCode) alone: an
// error's message may quote a workspace path.
func (o *Observer) EndCall(ctx context.Context, c *port.Call) {
	span, ok := ctx.Value(spanKey{o}).(trace.Span)
	if !ok {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, AttrDurationMS.Float64(float64(c.Duration)/float64(time.Millisecond)))
	if c.SessionID != "" && c.Op == port.OpCreateSession {
		// Known only once the session is made.
		attrs = append(attrs, AttrSessionID.String(c.SessionID))
	}
	switch {
	case c.Err != nil:
		code := port.ErrorCode(c.Err)
		if code == "" {
			code = "other"
		}
		attrs = append(attrs, AttrErrorCode.String(code))
		span.SetStatus(codes.Error, code)
	case c.Op == port.OpExecute:
		attrs = append(attrs,
			AttrOutcome.String(string(c.Outcome)),
			AttrReturnCode.Int(c.ReturnCode),
			AttrStateLost.Bool(c.StateLost),
			AttrOutputTruncated.Bool(c.OutputTruncated),
			AttrOutputBytes.Int64(c.OutputBytes),
		)
		if c.Outcome == port.OutcomeSessionLost {
			// The program's failure is not the call's; losing what
			// hosted the session is.
			span.SetStatus(codes.Error, string(c.Outcome))
		}
	case c.Op == port.OpGetFile, c.Op == port.OpGetOutputFile, c.Op == port.OpPutFile:
		attrs = append(attrs, AttrFileBytes.Int64(c.Bytes))
	}
	span.SetAttributes(attrs...)
	span.End(trace.WithTimestamp(c.Started.Add(c.Duration)))
}

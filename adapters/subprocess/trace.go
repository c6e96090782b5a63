package subprocess

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// The worker protocol carries the trace of each call in W3C trace context
// (traceparent, tracestate) in the call's gRPC metadata: the parent puts
// the trace of the call's context there, the worker takes it out into the
// context its port sees. Both ends are this package's, so the format is
// fixed, whatever a process's global propagator; a call whose context
// holds no trace sends nothing. (otelgrpc would do the same with a span of
// its own per call, and a dependency this needs no more of.)
func traceContext() propagation.TraceContext { return propagation.TraceContext{} }

// mdCarrier adapts gRPC metadata to the propagator. Its keys are lower
// case, as gRPC's and trace context's are.
type mdCarrier metadata.MD

func (c mdCarrier) Get(key string) string {
	if v := metadata.MD(c).Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

func (c mdCarrier) Set(key, value string) { metadata.MD(c).Set(key, value) }

func (c mdCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// outgoing returns ctx with its trace in the outgoing metadata.
func outgoing(ctx context.Context) context.Context {
	md := metadata.MD{}
	traceContext().Inject(ctx, mdCarrier(md))
	if len(md) == 0 {
		return ctx
	}
	if prev, ok := metadata.FromOutgoingContext(ctx); ok {
		md = metadata.Join(prev, md)
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// incoming returns ctx with the trace its incoming metadata carries.
func incoming(ctx context.Context) context.Context {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return ctx
	}
	return traceContext().Extract(ctx, mdCarrier(md))
}

func injectUnary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return invoker(outgoing(ctx), method, req, reply, cc, opts...)
}

func injectStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return streamer(outgoing(ctx), desc, cc, method, opts...)
}

func extractUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	return handler(incoming(ctx), req)
}

func extractStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, &tracedStream{ServerStream: ss, ctx: incoming(ss.Context())})
}

// tracedStream is a server stream whose context carries the call's trace.
type tracedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *tracedStream) Context() context.Context { return s.ctx }

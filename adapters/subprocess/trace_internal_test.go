package subprocess

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"
)

// TestTraceContextCrossesInMetadata: what the parent puts in a call's
// outgoing metadata gives the worker the same trace, as a remote parent.
func TestTraceContextCrossesInMetadata(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	sent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
	ctx := outgoing(trace.ContextWithSpanContext(context.Background(), sent))
	md, ok := metadata.FromOutgoingContext(ctx)
	if !ok || md.Get("traceparent")[0] != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" {
		t.Fatalf("outgoing metadata %v", md)
	}
	got := trace.SpanContextFromContext(incoming(metadata.NewIncomingContext(context.Background(), md)))
	if got.TraceID() != tid || got.SpanID() != sid || !got.IsRemote() || !got.IsSampled() {
		t.Errorf("worker got %+v", got)
	}

	// No trace: no metadata, and the worker's context has no span.
	plain := outgoing(context.Background())
	if _, ok := metadata.FromOutgoingContext(plain); ok {
		t.Error("a call without a trace sent trace metadata")
	}
	if sc := trace.SpanContextFromContext(incoming(metadata.NewIncomingContext(context.Background(), metadata.MD{}))); sc.IsValid() {
		t.Errorf("a call without a trace arrived with %+v", sc)
	}
}

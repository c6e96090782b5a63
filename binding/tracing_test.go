package binding_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/port"
)

// TestTracerProviderTracesTheBoundAdapter: one option gives the bound
// port its call spans and the remote adapter its client spans, the one
// under the other, and the backend the trace context.
func TestTracerProviderTracesTheBoundAdapter(t *testing.T) {
	var traceparent string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		traceparent = r.Header.Get("traceparent")
		http.Error(w, `{"detail":"busy"}`, http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	cfg, err := binder(t).Load(nil, env(map[string]string{"CODEPORT_SANDBOX_URL": srv.URL}))
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	b, err := binder(t).Open(cfg, binding.Options{TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	_, _ = b.CreateSession(context.Background(), port.CreateSessionRequest{})

	var call, client sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch {
		case s.Name() == "create_session":
			call = s
		case s.SpanKind() == trace.SpanKindClient:
			client = s
		}
	}
	if call == nil || client == nil {
		t.Fatalf("spans %v", rec.Ended())
	}
	if client.Parent().SpanID() != call.SpanContext().SpanID() {
		t.Error("the client span is not the call's child")
	}
	if want := "00-" + client.SpanContext().TraceID().String() + "-" + client.SpanContext().SpanID().String() + "-01"; traceparent != want {
		t.Errorf("backend got traceparent %q, want %q", traceparent, want)
	}
}

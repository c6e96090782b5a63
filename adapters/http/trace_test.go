package httpadapter_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/port"
)

// headerCatcher is a backend that keeps the traceparent header of every
// request and answers 503.
type headerCatcher struct {
	mu   sync.Mutex
	seen []string
}

func (h *headerCatcher) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.seen = append(h.seen, r.Header.Get("traceparent"))
	h.mu.Unlock()
	answer(http.StatusServiceUnavailable, `{"detail":"busy"}`)(w, r)
}

func (h *headerCatcher) last() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen[len(h.seen)-1]
}

var (
	callerTrace, _ = trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	callerSpan, _  = trace.SpanIDFromHex("00f067aa0ba902b7")
)

func underCallersSpan() context.Context {
	return trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: callerTrace, SpanID: callerSpan, TraceFlags: trace.FlagsSampled,
	}))
}

func TestRequestsCarryTheCallersTraceContext(t *testing.T) {
	var h headerCatcher
	a, _ := backend(t, h.serve, nil)
	_, _ = a.CreateSession(underCallersSpan(), port.CreateSessionRequest{})
	if got, want := h.last(), "00-"+callerTrace.String()+"-"+callerSpan.String()+"-01"; got != want {
		t.Errorf("traceparent %q, want %q", got, want)
	}
	_, _ = a.CreateSession(context.Background(), port.CreateSessionRequest{})
	if got := h.last(); got != "" {
		t.Errorf("a call without a trace sent traceparent %q", got)
	}
}

func TestClientSpanPerRequest(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	var h headerCatcher
	a, srv := backend(t, h.serve, func(c httpadapter.Config) httpadapter.Config { return c.WithTracerProvider(tp) })
	_, _, _ = a.GetFile(underCallersSpan(), "s1", "secret-dir/secret-file.txt")

	spans := rec.Ended()
	if len(spans) == 0 {
		t.Fatal("no span")
	}
	s := spans[0]
	if s.Name() != "GET /sessions/{id}/files" || s.SpanKind() != trace.SpanKindClient {
		t.Errorf("span %q of kind %v", s.Name(), s.SpanKind())
	}
	if s.Parent().SpanID() != callerSpan || s.SpanContext().TraceID() != callerTrace {
		t.Errorf("span under %s in %s, want the caller's", s.Parent().SpanID(), s.SpanContext().TraceID())
	}
	if got, want := h.seen[0], "00-"+callerTrace.String()+"-"+s.SpanContext().SpanID().String()+"-01"; got != want {
		t.Errorf("traceparent %q, want %q (the client span's)", got, want)
	}
	if s.Status().Code != codes.Error {
		t.Errorf("a 503 left status %v", s.Status())
	}
	attrs := map[string]string{}
	for _, kv := range s.Attributes() {
		attrs[string(kv.Key)] = kv.Value.String()
		if strings.Contains(kv.Value.String(), "secret") {
			t.Errorf("attribute %s holds the workspace path: %q", kv.Key, kv.Value.String())
		}
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	if attrs["http.response.status_code"] != "503" || attrs["http.request.method"] != "GET" ||
		attrs["url.template"] != "/sessions/{id}/files" || !strings.HasPrefix(host, attrs["server.address"]+":") {
		t.Errorf("attributes %v", attrs)
	}
}

package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
)

// newRecorder is a tracer provider whose ended spans the test reads.
func newRecorder(t *testing.T) (*sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, rec
}

func attrOf(s sdktrace.ReadOnlySpan, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func TestRequestSpansAreNamedByRoutePattern(t *testing.T) {
	tp, rec := newRecorder(t)
	h := newHarness(t, nil, server.WithTracerProvider(tp))
	r := h.do("POST", "/sessions", "")
	if r.status != http.StatusCreated && r.status != http.StatusOK {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var sess struct {
		ID string `json:"session_id"`
	}
	r.json(t, &sess)
	if r := h.do("POST", "/sessions/"+sess.ID+"/exec", execCode); r.status != http.StatusOK {
		t.Fatalf("exec: %d %s", r.status, r.body)
	}
	h.do("GET", "/sessions/"+sess.ID+"/files/list", "")
	h.do("GET", "/healthz", "")
	h.do("GET", "/no/such/route", "")

	names := map[string]bool{}
	for _, s := range rec.Ended() {
		names[s.Name()] = true
		if strings.Contains(s.Name(), sess.ID) {
			t.Errorf("span name %q holds the session id", s.Name())
		}
		if s.SpanKind() != trace.SpanKindServer {
			t.Errorf("span %q: kind %v", s.Name(), s.SpanKind())
		}
	}
	for _, want := range []string{"POST /sessions", "POST /sessions/{id}/exec", "GET /sessions/{id}/files/list", "GET /"} {
		if !names[want] {
			t.Errorf("no span %q among %v", want, names)
		}
	}
	if names["GET /healthz"] {
		t.Error("a probe of /healthz was traced")
	}
	for _, s := range rec.Ended() {
		if s.Name() == "POST /sessions/{id}/exec" {
			if v, ok := attrOf(s, "http.route"); !ok || v.AsString() != "/sessions/{id}/exec" {
				t.Errorf("http.route = %v", v.String())
			}
			if v, _ := attrOf(s, "http.response.status_code"); v.AsInt64() != http.StatusOK {
				t.Errorf("status attribute %v", v.String())
			}
		}
	}
}

func TestRequestSpanContinuesTheClientsTraceIntoThePort(t *testing.T) {
	tp, rec := newRecorder(t)
	fp := newFakePort()
	var mu sync.Mutex
	var seen trace.SpanContext
	fp.create = func(ctx context.Context, _ port.CreateSessionRequest) (port.Session, error) {
		mu.Lock()
		seen = trace.SpanContextFromContext(ctx)
		mu.Unlock()
		return port.Session{ID: "s-1", CreatedAt: fakeEpoch, LastActivityAt: fakeEpoch}, nil
	}
	h := newHarness(t, fp, server.WithTracerProvider(tp))
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, err := http.NewRequest("POST", h.srv.URL+"/sessions", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("traceparent", "00-"+traceID+"-"+parentID+"-01")
	if r := h.send(req); r.status >= 300 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.SpanContext().TraceID().String() != traceID || s.Parent().SpanID().String() != parentID || !s.Parent().IsRemote() {
		t.Errorf("span %s in trace %s under %s (remote %v); want trace %s under %s",
			s.Name(), s.SpanContext().TraceID(), s.Parent().SpanID(), s.Parent().IsRemote(), traceID, parentID)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen.SpanID() != s.SpanContext().SpanID() || seen.TraceID() != s.SpanContext().TraceID() {
		t.Errorf("the port saw span %s/%s, not the request's %s/%s", seen.TraceID(), seen.SpanID(), s.SpanContext().TraceID(), s.SpanContext().SpanID())
	}
}

// TestOversizedBodyClosesTheConnection: the handler tells net/http to
// close the connection after a body over its cap instead of draining it,
// with the tracing wrapper around it as without.
func TestOversizedBodyClosesTheConnection(t *testing.T) {
	for _, traced := range []bool{false, true} {
		name := "untraced"
		opts := []server.Option{server.WithMaxRequestBytes(1024)}
		if traced {
			name = "traced"
			tp, _ := newRecorder(t)
			opts = append(opts, server.WithTracerProvider(tp))
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil, opts...)
			r := h.do("POST", "/sessions", "")
			var sess struct {
				ID string `json:"session_id"`
			}
			r.json(t, &sess)
			body := `{"tool":"code_execution","input":{"code":"` + strings.Repeat("x", 64<<10) + `"}}`
			// Chunked, so that the cap is found by reading, not from the
			// Content-Length.
			req, err := http.NewRequest("POST", h.srv.URL+"/sessions/"+sess.ID+"/exec", io.MultiReader(strings.NewReader(body)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := h.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413", resp.StatusCode)
			}
			if !resp.Close {
				t.Error("the server kept the connection open after an oversized body")
			}
		})
	}
}

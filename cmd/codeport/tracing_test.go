package main

import (
	"context"
	"strings"
	"testing"

	"github.com/codeport/codeport/internal/testkit/otlptest"
	"github.com/codeport/codeport/port"
)

func TestServeRefusesBadTracingSettings(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"OTEL_TRACES_EXPORTER", "zipkin", `OTEL_TRACES_EXPORTER "zipkin": unknown exporter`},
		{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json", `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL "http/json": not supported`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
			t.Setenv(c.name, c.value)
			var out, errb strings.Builder
			code := run(context.Background(), []string{"serve", "--listen", "127.0.0.1:0", "--sessions-dir", t.TempDir()}, strings.NewReader(""), &out, &errb)
			if code != 2 || !strings.Contains(errb.String(), c.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errb.String(), c.want)
			}
		})
	}
}

// TestServeExportsItsSpansOnExit: with an OTLP endpoint set, serve traces
// its requests and calls, and flushes them when it stops (the batch delay
// is an hour, so only the flush can have sent them).
func TestServeExportsItsSpansOnExit(t *testing.T) {
	recv := otlptest.NewHTTP(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.Endpoint)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "3600000")
	srv := startServe(t)
	p := client(t, srv.base, "")
	ctx := context.Background()
	s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)"}); err != nil {
		t.Fatal(err)
	}
	if code := srv.stop(); code != 0 {
		t.Fatalf("serve exited with %d; log:\n%s", code, srv.log.String())
	}
	byName := map[string]otlptest.Span{}
	for _, sp := range recv.Spans() {
		byName[sp.Name] = sp
	}
	request, call := byName["POST /sessions/{id}/exec"], byName["execute"]
	if request.Name == "" || call.Name == "" {
		t.Fatalf("spans %v; log:\n%s", byName, srv.log.String())
	}
	if call.ParentSpanID != request.SpanID || call.TraceID != request.TraceID {
		t.Errorf("the execute span is not the request's child: %+v, %+v", call, request)
	}
	if call.Resource["service.name"] != "codeport" || call.Attributes["codeport.adapter"] != "wasm" {
		t.Errorf("execute span %+v", call)
	}
	if _, traced := byName["GET /healthz"]; traced {
		t.Error("health probes were traced")
	}
}

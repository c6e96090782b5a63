package subprocess_test

import (
	"context"
	"io"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/codeport/codeport/adapters/subprocess"
	"github.com/codeport/codeport/internal/testkit/otlptest"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/telemetry/tracing"
)

// TestWorkersContinueTheTrace: the parent traces into memory, its worker
// (the codeport binary) exports over OTLP to a receiver here, and each
// call's span in the worker is the child of the parent's span for it:
// the trace context crossed the process boundary in the calls' gRPC
// metadata, on unary calls and streams alike.
func TestWorkersContinueTheTrace(t *testing.T) {
	if workerBin == "" {
		t.Fatal("no worker binary: see TestMain's output")
	}
	recv := otlptest.NewHTTP(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		return c.WithWorkers(1, 1).WithWorkerTraceEnv([]string{
			"OTEL_TRACES_EXPORTER=otlp",
			"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.Endpoint,
			"OTEL_SERVICE_NAME=codeport-worker",
			// Export soon after each span ends, not every 5 s.
			"OTEL_BSP_SCHEDULE_DELAY=50",
		})
	}, port.WithObserver(tracing.NewObserver(tp)))

	ctx := context.Background()
	id := newSession(t, a)
	if res := run(t, a, id, "print(6 * 7)"); res.Stdout != "42\n" {
		t.Fatalf("stdout %q", res.Stdout)
	}
	if _, err := a.PutFile(ctx, id, "in.txt", strings.NewReader("data")); err != nil {
		t.Fatal(err)
	}
	rc, _, err := a.GetFile(ctx, id, "in.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, rc)
	_ = rc.Close()
	if _, err := a.ListFiles(ctx, id, "."); err != nil {
		t.Fatal(err)
	}

	ops := []string{"create_session", "execute", "put_file", "get_file", "list_files"}
	parent := map[string]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		parent[s.Name] = s
	}
	inWorker := recv.WaitFor(t, func(spans []otlptest.Span) bool {
		seen := map[string]bool{}
		for _, s := range spans {
			seen[s.Name] = true
		}
		for _, op := range ops {
			if !seen[op] {
				return false
			}
		}
		return true
	})
	for _, op := range ops {
		p, ok := parent[op]
		if !ok {
			t.Errorf("the parent made no %s span", op)
			continue
		}
		var found bool
		for _, w := range inWorker {
			if w.Name != op {
				continue
			}
			found = true
			if w.TraceID != p.SpanContext.TraceID().String() || w.ParentSpanID != p.SpanContext.SpanID().String() {
				t.Errorf("%s: the worker's span is in trace %s under %s; the parent's is %s in %s",
					op, w.TraceID, w.ParentSpanID, p.SpanContext.SpanID(), p.SpanContext.TraceID())
			}
			if w.Attributes["codeport.adapter"] != "wasm" || w.Resource["service.name"] != "codeport-worker" {
				t.Errorf("%s: worker span attributes %v, resource %v", op, w.Attributes, w.Resource)
			}
		}
		if !found {
			t.Errorf("no %s span from the worker", op)
		}
	}
}

func TestWorkerTraceEnvTakesOnlyOTelVariables(t *testing.T) {
	for _, env := range [][]string{{"PATH=/bin"}, {"OTEL_SERVICE_NAME"}, {"OTEL_X=a\x00b"}} {
		_, err := subprocess.New(subprocess.NewConfig().WithWorkerTraceEnv(env))
		if err == nil || !strings.Contains(err.Error(), "OTEL_") {
			t.Errorf("%q: got %v, want a refusal", env, err)
		}
	}
}

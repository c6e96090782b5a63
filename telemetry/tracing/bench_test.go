package tracing_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/testkit/measure"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
	"github.com/codeport/codeport/telemetry/tracing"
)

// BenchmarkTracedExecutePrint: print(1) in a live session over loopback
// HTTP, untraced and traced (a request span and a call span per call,
// batched to an exporter that drops them): what tracing costs a call.
func BenchmarkTracedExecutePrint(b *testing.B) {
	for _, traced := range []bool{false, true} {
		name := "off"
		if traced {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			var popts []port.Option
			var sopts []server.Option
			if traced {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				popts = append(popts, port.WithObserver(tracing.NewObserver(tp)))
				sopts = append(sopts, server.WithTracerProvider(tp))
			}
			a := wasmtest.New(b, func(c wasm.Config) wasm.Config { return c.WithWarmPool(0, nil) }, popts...)
			srv := httptest.NewServer(server.NewHandler(a, sopts...))
			b.Cleanup(srv.Close)
			c := srv.Client()
			s, err := a.CreateSession(context.Background(), port.CreateSessionRequest{})
			if err != nil {
				b.Fatal(err)
			}
			url := srv.URL + "/sessions/" + s.ID + "/exec"
			body := []byte(`{"tool":"code_execution","input":{"code":"print(1)"}}`)
			var samples []time.Duration
			for b.Loop() {
				t := time.Now()
				resp, err := c.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), `"stdout":"1\n"`) {
					b.Fatalf("%d %s", resp.StatusCode, out)
				}
				samples = append(samples, time.Since(t))
			}
			measure.Report(b, "call", samples)
		})
	}
}

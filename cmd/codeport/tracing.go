package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/codeport/codeport/adapters/subprocess"
	"github.com/codeport/codeport/telemetry/tracingenv"
)

// tracingShutdownTimeout bounds the flush of the spans left at exit, so a
// collector that is down cannot hold the process.
const tracingShutdownTimeout = 5 * time.Second

// startTracing builds the tracer provider the OTEL_* variables ask for
// (tracingenv.New; console spans go to console). When tracing is on, the
// exporters' own errors (a collector that cannot be reached, say) go to
// log instead of the standard library's logger: this is a program's main,
// the one place allowed to set OpenTelemetry's global error handler.
func startTracing(ctx context.Context, console io.Writer, log *slog.Logger) (*tracingenv.Tracing, error) {
	t, err := tracingenv.New(ctx, tracingenv.Config{Getenv: os.Getenv, Console: console})
	if err != nil {
		return nil, err
	}
	if t.TracerProvider() != nil && log != nil {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			log.Warn("tracing", "error", err)
		}))
		log.Info("tracing", "exporters", strings.Join(t.Exporters(), ","), "protocol", t.Protocol())
	}
	return t, nil
}

// stopTracing flushes what is left, within tracingShutdownTimeout.
func stopTracing(t *tracingenv.Tracing, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), tracingShutdownTimeout)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil && log != nil {
		log.Warn("tracing shutdown", "error", err)
	}
}

// worker is the hidden worker command: the subprocess adapter's worker,
// which traces when its parent passed it OTEL_* variables (never to a
// console: its standard streams belong to its parent).
func worker(stderr io.Writer) int {
	t, err := tracingenv.New(context.Background(), tracingenv.Config{Getenv: os.Getenv})
	if err != nil {
		fmt.Fprintf(stderr, "codeport worker: %v\n", err)
		return 1
	}
	defer stopTracing(t, nil)
	if err := subprocess.ServeWorker(subprocess.WithWorkerTracerProvider(t.TracerProvider())); err != nil {
		fmt.Fprintf(stderr, "codeport worker: %v\n", err)
		return 1
	}
	return 0
}

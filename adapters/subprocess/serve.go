package subprocess

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/telemetry/tracing"
)

// ErrNotAWorker is returned by ServeWorker when the process was not
// started by the subprocess adapter.
var ErrNotAWorker = errors.New("not started as a codeport worker: this command is run by the subprocess adapter, not by hand")

// WorkerOption configures ServeWorker.
type WorkerOption func(*workerOptions)

type workerOptions struct {
	tracerProvider trace.TracerProvider
}

// WithWorkerTracerProvider traces the worker's calls with tp: a span per
// call of its port (telemetry/tracing), child of the parent's span for the
// call, whose trace context arrives with each call. The worker's caller
// builds tp (the codeport binary from the OTEL_* variables its parent
// passed, see Config.WithWorkerTraceEnv) and shuts it down once
// ServeWorker returns. nil traces nothing.
func WithWorkerTracerProvider(tp trace.TracerProvider) WorkerOption {
	return func(o *workerOptions) { o.tracerProvider = tp }
}

// ServeWorker is the worker side: the main of a worker process (the
// codeport binary's hidden `worker` command). It puts the memory limit
// (RLIMIT_DATA and RLIMIT_AS) its parent chose on itself, starts the wasm adapter its parent
// configured, and serves it over the plugin connection until the parent
// closes it. Its log records go to stderr, which the parent logs.
func ServeWorker(opts ...WorkerOption) error {
	var o workerOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	h := handshake()
	raw := os.Getenv(specEnv)
	if os.Getenv(h.MagicCookieKey) != h.MagicCookieValue || raw == "" {
		return ErrNotAWorker
	}
	// stderr is the parent's log pipe; stdin is whatever the parent had,
	// which a worker must not read.
	if devnull, err := os.Open(os.DevNull); err == nil {
		_ = syscall.Dup3(int(devnull.Fd()), 0, 0)
		_ = devnull.Close()
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("pid", os.Getpid())
	var spec workerSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return fmt.Errorf("worker spec: %w", err)
	}
	if spec.DataLimit > 0 {
		for _, l := range []struct {
			name     string
			resource int
			bytes    int64
		}{{"RLIMIT_DATA", syscall.RLIMIT_DATA, spec.DataLimit}, {"RLIMIT_AS", syscall.RLIMIT_AS, spec.DataLimit + AddressSpaceSlack}} {
			lim := &syscall.Rlimit{Cur: uint64(l.bytes), Max: uint64(l.bytes)}
			if err := syscall.Setrlimit(l.resource, lim); err != nil {
				return fmt.Errorf("set %s: %w", l.name, err)
			}
		}
	}
	settings := wasm.DefaultSettings()
	if err := json.Unmarshal(spec.Wasm, &settings); err != nil {
		return err
	}
	// The runtime's own events are logged; its calls are not, since the
	// parent's port logs each of them already.
	portOpts := []port.Option{port.WithLogger(slog.New(slog.DiscardHandler))}
	if o.tracerProvider != nil {
		portOpts = append(portOpts, port.WithObserver(tracing.NewObserver(o.tracerProvider)))
	}
	// The collector is off while the runtime starts: most of what
	// starting allocates (the module's decoding, the image's loading) is
	// garbage by the end, and collecting it on the way lengthens a cold
	// worker's start, which a caller waits for. (A worker's environment
	// is empty: no GOGC of the operator's is overridden.)
	gcPercent := debug.SetGCPercent(-1)
	// The shell is compiled at a worker's first bash call (the parent
	// compiled it into the cache before starting workers, so that is a
	// load): most workers never run bash.
	a, err := wasm.New(wasm.NewConfig().WithSettings(settings).WithLogger(log).WithShellAtStart(false), portOpts...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	if spec.WaitWarm {
		err = wasm.WaitWarm(ctx, a)
	} else {
		err = a.WaitReady(ctx)
	}
	cancel()
	debug.SetGCPercent(gcPercent)
	if err != nil {
		_ = a.Close()
		return err
	}
	// Starting left garbage behind (the module's decoding, the image's
	// loading): about 12 MiB of heap the runtime would hand back only
	// slowly, in a process that may then sit idle for a session's life.
	// A warm worker, started ahead of demand, hands it back now; a cold
	// one has a caller waiting, whom a collection would only delay.
	if spec.WaitWarm {
		debug.FreeOSMemory()
	}
	srv := &workerServer{port: a}
	maxMsg := maxMessage(settings.Limits(), settings.InlineImageBytes)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: h,
		Plugins:         plugin.PluginSet{"port": &grpcPlugin{server: srv}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(maxMsg), grpc.MaxSendMsgSize(maxMsg),
				grpc.ChainUnaryInterceptor(extractUnary), grpc.ChainStreamInterceptor(extractStream))...)
		},
		Logger: hclog.New(&hclog.LoggerOptions{Name: "worker", Level: hclog.Error, Output: os.Stderr, JSONFormat: true}),
	})
	srv.bg.Wait()
	return a.Close()
}

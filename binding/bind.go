package binding

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/adapters/subprocess"
	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/purpose"
	"github.com/codeport/codeport/port"
)

// Bound is the adapter chosen by the configuration. It is a
// port.CodeExecutionPort whose Describe carries the purpose hint.
type Bound struct {
	port.CodeExecutionPort
	// Adapter names the bound adapter ("wasm", "subprocess" or "http").
	Adapter string
	ready   func() bool
}

// Options are what Open needs besides the configuration.
type Options struct {
	Logger   *slog.Logger
	Registry prometheus.Registerer
	// WorkerCommand runs a worker process with isolation "process"
	// (default: this executable with the argument "worker", right for the
	// codeport binary; a gateway embedding binding names a codeport
	// binary here).
	WorkerCommand []string
}

// Open binds the adapter the configuration selects: a configured sandbox
// URL wins and binds the HTTP adapter; otherwise the CPython runtime, in
// this process or, with isolation "process", in worker processes. The
// returned port must be closed.
func Open(cfg Config, opts Options) (*Bound, error) {
	if cfg.SandboxURL != "" {
		hc := httpadapter.NewConfig(cfg.SandboxURL).
			WithToken(cfg.SandboxToken).
			WithDefaultTimeout(cfg.Timeout).
			WithMaxFileBytes(cfg.FileLimit)
		if opts.Logger != nil {
			hc = hc.WithLogger(opts.Logger)
		}
		a, err := httpadapter.New(hc)
		if err != nil {
			return nil, fmt.Errorf("bind http adapter: %w", err)
		}
		return &Bound{CodeExecutionPort: a, Adapter: "http", ready: func() bool { return true }}, nil
	}
	wc := wasmConfig(cfg, opts)
	if cfg.Isolation == IsolationProcess {
		return openSubprocess(cfg, opts, wc)
	}
	a, err := wasm.New(wc.WithWarmPool(cfg.WarmPool, cfg.WarmModules).WithWarmPoolRefill(cfg.WarmPoolRefill).WithMaxSessions(cfg.MaxSessions))
	if err != nil {
		return nil, fmt.Errorf("bind wasm adapter: %w", err)
	}
	return &Bound{CodeExecutionPort: a, Adapter: "wasm", ready: a.Ready}, nil
}

// wasmConfig is the runtime's configuration, in process or in workers.
func wasmConfig(cfg Config, opts Options) wasm.Config {
	wc := wasm.NewConfig().
		WithTimeouts(cfg.Timeout, cfg.MaxTimeout).
		WithMemoryLimit(cfg.MemoryLimit).
		WithOutputLimit(int(cfg.OutputLimit)).
		WithSourceLimit(int(cfg.SourceLimit)).
		WithWorkspaceLimit(cfg.WorkspaceLimit).
		WithFileLimit(cfg.FileLimit).
		WithSessionLifetimes(cfg.IdleTimeout, cfg.MaxIdleTimeout, cfg.MaxLifetime).
		WithLogger(opts.Logger)
	if cfg.CompileCacheDir != "" {
		wc = wc.WithCompilationCacheDir(cfg.CompileCacheDir)
	}
	if cfg.SessionsDir != "" {
		wc = wc.WithSessionsDir(cfg.SessionsDir)
	}
	if opts.Registry != nil {
		wc = wc.WithMetrics(opts.Registry)
	}
	return wc
}

// openSubprocess binds the subprocess adapter: sessions in worker
// processes running this executable's hidden worker command (or
// opts.WorkerCommand).
func openSubprocess(cfg Config, opts Options, wc wasm.Config) (*Bound, error) {
	sc := subprocess.NewConfig().
		WithWasm(wc.WithWarmPool(1, cfg.WarmModules)).
		WithWorkers(cfg.MinWorkers, max(cfg.MaxSessions/cfg.SessionsPerWorker, 1)).
		WithSessionsPerWorker(cfg.SessionsPerWorker).
		WithRecycleAfter(cfg.SessionsPerWorker).
		WithLogger(opts.Logger)
	if cfg.WorkerMemoryLimit > 0 {
		sc = sc.WithWorkerMemoryLimit(cfg.WorkerMemoryLimit)
	}
	if cfg.SessionsDir != "" {
		sc = sc.WithSessionsDir(cfg.SessionsDir)
	}
	if len(opts.WorkerCommand) > 0 {
		sc = sc.WithWorkerCommand(opts.WorkerCommand[0], opts.WorkerCommand[1:]...)
	}
	if opts.Registry != nil {
		sc = sc.WithMetrics(opts.Registry)
	}
	a, err := subprocess.New(sc)
	if err != nil {
		return nil, fmt.Errorf("bind subprocess adapter: %w", err)
	}
	return &Bound{CodeExecutionPort: a, Adapter: "subprocess", ready: a.Ready}, nil
}

// Ready reports whether the bound adapter can start sessions without
// waiting (the in-process runtime is compiled).
func (b *Bound) Ready() bool { return b.ready() }

// Describe returns the bound adapter's capability description with its
// purpose hint filled in.
func (b *Bound) Describe(ctx context.Context) (port.Capabilities, error) {
	c, err := b.CodeExecutionPort.Describe(ctx)
	if err != nil {
		return c, err
	}
	if c.PurposeHint == "" {
		c.PurposeHint = PurposeHint(c)
	}
	return c, nil
}

// PurposeHint is the text a model is shown about the tool, built only from
// what the capability description says, so it never promises a package,
// a network or a limit the backend does not have.
func PurposeHint(c port.Capabilities) string {
	return purpose.Hint(c, purpose.Options{})
}

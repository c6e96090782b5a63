package subprocess

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/adapters/wasm"
)

// Config configures the adapter. Start from NewConfig and change what you
// need with the With methods, each of which returns a modified copy.
type Config struct {
	command        []string
	wasm           wasm.Config
	minWorkers     int
	maxWorkers     int
	perWorker      int
	recycleAfter   int
	killGrace      time.Duration
	startTimeout   time.Duration
	dataLimit      int64
	cgroupMemory   bool
	sessionsDir    string
	retryAfter     time.Duration
	healthInterval time.Duration
	registerer     prometheus.Registerer
	logger         *slog.Logger
}

// NewConfig returns the defaults: workers are this executable run as
// `<executable> worker` (the codeport binary's hidden worker command),
// hosting the wasm adapter with wasm.NewConfig()'s limits; 2 workers kept
// started and warm, at most 16 live, one session per worker and a worker
// per session (it dies with its session), a 2 s grace after a call's
// deadline before its worker is killed, and a memory limit per worker
// derived from the session memory limit (see WithWorkerMemoryLimit).
func NewConfig() Config {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return Config{
		command:        []string{exe, "worker"},
		wasm:           wasm.NewConfig(),
		minWorkers:     2,
		maxWorkers:     16,
		perWorker:      1,
		recycleAfter:   1,
		killGrace:      2 * time.Second,
		startTimeout:   2 * time.Minute,
		cgroupMemory:   true,
		retryAfter:     time.Second,
		healthInterval: time.Second,
		logger:         slog.New(slog.DiscardHandler),
	}
}

// WithWorkerCommand sets the program (and its arguments) that runs a
// worker: a binary whose main calls ServeWorker, such as `codeport worker`.
func (c Config) WithWorkerCommand(path string, args ...string) Config {
	c.command = append([]string{path}, args...)
	return c
}

// WithWasm sets the configuration of the wasm adapter each worker hosts:
// runtime, limits, timeouts and session lifetimes. Its session limit and
// warm pool are set by the adapter (WithSessionsPerWorker); its logger and
// metrics registry stay in the parent and are not used by workers.
func (c Config) WithWasm(w wasm.Config) Config { c.wasm = w; return c }

// WithWorkers sets how many idle workers are kept started (min, each with
// a warm interpreter) and how many may be alive at once (max). A
// CreateSession that finds no idle worker starts one if fewer than max are
// alive, and is refused with a *port.CapacityError otherwise.
func (c Config) WithWorkers(min, max int) Config {
	c.minWorkers, c.maxWorkers = min, max
	return c
}

// WithSessionsPerWorker sets how many sessions a worker hosts at once. The
// default, 1, gives each session a process of its own: a crash or an
// out-of-memory kill takes no other session with it.
func (c Config) WithSessionsPerWorker(n int) Config { c.perWorker = n; return c }

// WithRecycleAfter retires a worker once it has hosted n sessions (the
// default, 1, makes a worker die with its session: nothing a program left
// in the process can reach the next session).
func (c Config) WithRecycleAfter(n int) Config { c.recycleAfter = n; return c }

// WithKillGrace sets how long past a call's deadline (or its caller's
// cancellation) the adapter waits for the worker's answer before it kills
// the worker with SIGKILL and reports the session lost.
func (c Config) WithKillGrace(d time.Duration) Config { c.killGrace = d; return c }

// WithStartTimeout bounds how long a worker may take to start and compile
// the runtime (from the on-disk compilation cache this takes well under a
// second; the first start on a host can take tens of seconds).
func (c Config) WithStartTimeout(d time.Duration) Config { c.startTimeout = d; return c }

// WithWorkerMemoryLimit sets the memory limit each worker puts on itself
// before it starts the runtime, as two rlimits: RLIMIT_DATA of bytes (its
// heap and private writable mappings) and RLIMIT_AS of bytes plus
// AddressSpaceSlack. The data limit is the one meant; it cannot stand
// alone because the kernel does not always charge the Go heap's mappings
// to it when they replace address space the runtime reserved earlier (a
// 1.5 GiB allocation under a 700 MiB data limit succeeded in 2 runs of
// about 12), and the address-space limit catches those. Zero derives the limit
// from the wasm memory limit: room for every session's linear memory twice
// (growing it copies) plus the runtime's own heap. A negative value sets
// no limit.
func (c Config) WithWorkerMemoryLimit(bytes int64) Config { c.dataLimit = bytes; return c }

// WithCgroupMemory turns the per-worker cgroup v2 memory.max on or off (on
// by default; used only where the host delegates a writable cgroup v2
// memory controller, which the adapter detects when it starts).
func (c Config) WithCgroupMemory(on bool) Config { c.cgroupMemory = on; return c }

// WithSessionsDir sets the directory under which workers keep their
// sessions' workspaces (a directory per worker, removed by the parent when
// the worker ends, however it ends). Empty uses a new temporary directory.
func (c Config) WithSessionsDir(dir string) Config { c.sessionsDir = dir; return c }

// WithRetryAfter sets the retry hint of a refused CreateSession.
func (c Config) WithRetryAfter(d time.Duration) Config { c.retryAfter = d; return c }

// WithMetrics registers the adapter's metrics with reg: workers live,
// worker restarts by cause, and the time CreateSession waits for a worker.
func (c Config) WithMetrics(reg prometheus.Registerer) Config { c.registerer = reg; return c }

// WithLogger sets the logger. The adapter logs worker lifecycles and the
// workers' own log lines (which never hold user code, output or files).
func (c Config) WithLogger(l *slog.Logger) Config {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	c.logger = l
	return c
}

// workerMemoryOverhead is what a worker's data segment holds besides its
// sessions' linear memory: the Go runtime, the compiled CPython module and
// the adapter. Measured at about 210 MiB (VmData) for a worker with one
// session that ran a call; the rest is headroom.
const workerMemoryOverhead = 512 << 20

// AddressSpaceSlack is what a worker's RLIMIT_AS allows beyond its data
// limit: address space the Go runtime and the compiled module reserve
// without writing to it, measured at about 1.75 GiB (VmSize less VmData)
// for a worker with a session.
const AddressSpaceSlack = 2560 << 20

// WorkerMemoryLimit is the RLIMIT_DATA a worker will run under (its
// RLIMIT_AS is this plus AddressSpaceSlack), 0 for none.
func (c Config) WorkerMemoryLimit() int64 {
	switch {
	case c.dataLimit < 0:
		return 0
	case c.dataLimit > 0:
		return c.dataLimit
	}
	return 2*c.wasm.Limits().MemoryBytes*int64(c.perWorker) + workerMemoryOverhead
}

func (c Config) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("subprocess adapter config: "+format, args...)
	}
	switch {
	case len(c.command) == 0 || c.command[0] == "":
		return bad("no worker command")
	case c.minWorkers < 0 || c.maxWorkers < 1 || c.minWorkers > c.maxWorkers:
		return bad("workers: need 0 <= min <= max and max >= 1 (got %d, %d)", c.minWorkers, c.maxWorkers)
	case c.perWorker < 1 || c.recycleAfter < 1:
		return bad("sessions per worker and recycle-after must be at least 1")
	case c.killGrace <= 0 || c.startTimeout <= 0 || c.retryAfter <= 0 || c.healthInterval <= 0:
		return bad("durations must be positive")
	}
	return nil
}

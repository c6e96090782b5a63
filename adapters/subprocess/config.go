package subprocess

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/hostmem"
)

// Settings are the adapter's settings, the one place they are defined
// (see wasm.Settings for how they are set): the runtime's own, which each
// worker runs under, and the workers'. A Config takes them only through
// its With methods: WithSettings for a whole Settings, WithWasm for the
// runtime's, the others for one setting each.
type Settings struct {
	wasm.Settings
	MinWorkers        int   `json:"min_workers" setting:"min-workers" help:"with isolation process: idle worker processes kept started and warm"`
	SessionsPerWorker int   `json:"sessions_per_worker" setting:"sessions-per-worker" help:"with isolation process: sessions a worker process hosts (1: a process per session)"`
	RecycleAfter      int   `json:"recycle_after" setting:"recycle-after" help:"with isolation process: sessions a worker hosts in its life, one after another, before it is retired (0: sessions-per-worker, fewer is refused; more reuses a worker whose sessions ended, its interpreter reset to the image)"`
	TenantWorkers     bool  `json:"tenant_workers" setting:"tenant-workers" help:"with isolation process: a worker hosts the sessions of one tenant only (the tenant of the caller's credential), at once (sessions-per-worker) and one after another (recycle-after), so that tenants share no process; false: any session may share a worker"`
	WorkerMemoryLimit int64 `json:"worker_memory_limit" setting:"worker-memory-limit" unit:"bytes" help:"with isolation process: OS memory limit of a worker (RLIMIT_DATA, with RLIMIT_AS 2.5GiB above it) (0: twice the memory limit per session plus 512MiB)"`
}

// DefaultSettings are the runtime's defaults, two workers kept started and
// warm, and one session per worker (it dies with its session).
func DefaultSettings() Settings {
	return Settings{Settings: wasm.DefaultSettings(), MinWorkers: 2, SessionsPerWorker: 1}
}

// Validate reports every setting out of range.
func (s Settings) Validate() error {
	var errs []error
	if err := s.Settings.Validate(); err != nil {
		errs = append(errs, err)
	}
	switch {
	case s.RecycleAfter < 0:
		errs = append(errs, errors.New("subprocess adapter settings: recycle-after must not be negative"))
	case s.MinWorkers < 0 || s.SessionsPerWorker < 1:
		errs = append(errs, errors.New("subprocess adapter settings: min-workers must be 0 or more and sessions-per-worker at least 1"))
	case s.RecycleAfter > 0 && s.RecycleAfter < s.SessionsPerWorker:
		// A worker retired after fewer sessions than it holds at once
		// never holds sessions-per-worker: the capacity published
		// (workers times sessions-per-worker) would not be there.
		errs = append(errs, fmt.Errorf("subprocess adapter settings: recycle-after (%d) must be 0 or at least sessions-per-worker (%d)", s.RecycleAfter, s.SessionsPerWorker))
	case s.WorkerMemoryLimit == 0 && s.MemoryLimit > 0 && int64(s.SessionsPerWorker) > (math.MaxInt64-workerMemoryOverhead)/(2*s.MemoryLimit):
		// The worker memory limit derived from it would overflow, to a
		// limit far below what the worker's sessions may take.
		errs = append(errs, fmt.Errorf("subprocess adapter settings: sessions-per-worker (%d) is too large: twice its sessions' memory-limit overflows a worker's memory limit", s.SessionsPerWorker))
	case s.MaxSessions == 0 && s.MinWorkers > math.MaxInt/s.SessionsPerWorker:
		// max-sessions is then at least what the idle workers hold,
		// which overflows.
		errs = append(errs, errors.New("subprocess adapter settings: min-workers times sessions-per-worker overflows"))
	case s.MaxSessions > 0 && s.SessionsPerWorker > s.MaxSessions:
		// A worker is its sessions-per-worker slots: one alone would
		// admit more sessions than max-sessions.
		errs = append(errs, fmt.Errorf("subprocess adapter settings: sessions-per-worker (%d) must be at most max-sessions (%d)", s.SessionsPerWorker, s.MaxSessions))
	case s.MaxSessions > 0 && s.MinWorkers > s.MaxSessions/s.SessionsPerWorker:
		// Divided, not multiplied: the product of two large settings
		// overflows to a small one.
		errs = append(errs, errors.New("subprocess adapter settings: min-workers times sessions-per-worker must be at most max-sessions"))
	}
	if s.HibernateAfter != 0 || s.HibernateDir != "" {
		// A worker's sessions die with it; hibernation is the in-process
		// adapter's.
		errs = append(errs, errors.New("subprocess adapter settings: hibernate-after and hibernate-dir are not offered with isolation process"))
	}
	return errors.Join(errs...)
}

// Config configures the adapter: its Settings, plus what cannot be a
// setting. Start from NewConfig and set what differs with the With
// methods, each of which returns a modified copy: WithSettings for the
// whole set (as package binding does), WithWasm for the runtime's, the
// others for one setting each. The settings are not fields of Config, so
// that there is one way to set each, and a Config handed on cannot be
// changed behind its holder.
type Config struct {
	settings       Settings
	command        []string
	maxWorkers     int // 0: max-sessions / sessions-per-worker
	killGrace      time.Duration
	startTimeout   time.Duration
	cgroupMemory   bool
	healthInterval time.Duration
	registerer     prometheus.Registerer
	logger         *slog.Logger
	traceEnv       []string
}

// NewConfig returns DefaultSettings, with workers that are this executable
// run as `<executable> worker` (the codeport binary's hidden worker
// command); as many workers at most as max-sessions allows; a worker
// retired once it has hosted its share of sessions; a 2 s grace after a
// call's deadline before its worker is killed, and a memory limit per
// worker derived from the session memory limit (see WithWorkerMemoryLimit).
func NewConfig() Config {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return Config{
		settings:       DefaultSettings(),
		command:        []string{exe, "worker"},
		killGrace:      2 * time.Second,
		startTimeout:   2 * time.Minute,
		cgroupMemory:   true,
		healthInterval: time.Second,
		logger:         slog.New(slog.DiscardHandler),
	}
}

// WithSettings replaces every setting with s, the runtime's and the
// workers': the way to apply settings read from flags, CODEPORT_*
// environment variables or YAML (package binding). New validates them.
func (c Config) WithSettings(s Settings) Config {
	s.WarmModules = slices.Clone(s.WarmModules)
	c.settings = s
	return c
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
func (c Config) WithWasm(w wasm.Config) Config { c.settings.Settings = w.Settings(); return c }

// WithWorkers sets how many idle workers are kept started (min, each with
// a warm interpreter) and how many may be alive at once (max). A
// CreateSession that finds no idle worker starts one if fewer than max are
// alive, and is refused with a *port.CapacityError otherwise. A max of 0,
// the default, allows as many as max-sessions needs at
// sessions-per-worker each.
func (c Config) WithWorkers(min, max int) Config {
	c.settings.MinWorkers, c.maxWorkers = min, max
	return c
}

// WithSessionsPerWorker sets how many sessions a worker hosts at once. The
// default, 1, gives each session a process of its own: a crash or an
// out-of-memory kill takes no other session with it.
func (c Config) WithSessionsPerWorker(n int) Config { c.settings.SessionsPerWorker = n; return c }

// WithRecycleAfter retires a worker once it has hosted n sessions (the
// default, 0, is sessions-per-worker: with one session per worker, a
// worker dies with its session, and nothing a program left in the process
// can reach the next session). More reuses a worker whose sessions ended:
// the wasm adapter resets their interpreters to the image (nothing a
// program did inside the sandbox carries over; a flaw that let a program
// out of it would persist in the process), and a session then starts in
// milliseconds instead of a process's start.
func (c Config) WithRecycleAfter(n int) Config { c.settings.RecycleAfter = n; return c }

// WithTenantWorkers binds each worker to the tenant of its first session
// (port.TenantOf the call's context): it then hosts that tenant's
// sessions only, at once (WithSessionsPerWorker) and one after another
// (WithRecycleAfter), and no other tenant's, ever. With one session per
// worker and no recycling, every worker is a session's alone and this
// changes nothing; above, it is what lets workers be shared without
// letting tenants share a process: one tenant's program that escaped the
// interpreter would find only that tenant's sessions.
func (c Config) WithTenantWorkers(on bool) Config { c.settings.TenantWorkers = on; return c }

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
func (c Config) WithWorkerMemoryLimit(bytes int64) Config {
	c.settings.WorkerMemoryLimit = bytes
	return c
}

// WithCgroupMemory turns the per-worker cgroup v2 memory.max on or off (on
// by default; used only where the host delegates a writable cgroup v2
// memory controller, which the adapter detects when it starts).
func (c Config) WithCgroupMemory(on bool) Config { c.cgroupMemory = on; return c }

// WithSessionsDir sets the directory under which workers keep their
// sessions' workspaces (a directory per worker, removed by the parent when
// the worker ends, however it ends). Empty uses a new temporary directory.
func (c Config) WithSessionsDir(dir string) Config { c.settings.SessionsDir = dir; return c }

// WithRetryAfter sets the retry hint of a refused CreateSession.
func (c Config) WithRetryAfter(d time.Duration) Config { c.settings.RetryAfter = d; return c }

// WithWorkerTraceEnv gives every worker these OTEL_* environment
// variables ("NAME=value"), so that a worker that traces (the codeport
// binary's does, from them, as `codeport serve` does) exports its own
// spans, continuing the trace of each call (tracingenv.Tracing.WorkerEnv
// picks them from a process's environment). Without them a worker
// exports nothing; the trace context reaches it all the same, in the
// metadata of every call. Workers inherit no other environment, and a
// variable not named OTEL_* is refused.
func (c Config) WithWorkerTraceEnv(env []string) Config {
	c.traceEnv = append([]string(nil), env...)
	return c
}

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

// dataLimit is the RLIMIT_DATA a worker will run under (its RLIMIT_AS is
// this plus AddressSpaceSlack), 0 for none.
func (c Config) dataLimit() int64 {
	switch {
	case c.settings.WorkerMemoryLimit < 0:
		return 0
	case c.settings.WorkerMemoryLimit > 0:
		return c.settings.WorkerMemoryLimit
	}
	return 2*c.settings.Limits().MemoryBytes*int64(c.settings.SessionsPerWorker) + workerMemoryOverhead
}

// sessionLimit is MaxSessions, or where it is 0, the sessions of as many
// workers as fit in the memory this process may count on at their OS
// memory limit each (dataLimit, which covers the worker's own runtime;
// see wasm.Settings.SessionLimit), and never fewer than the workers kept
// started hold.
func (c Config) sessionLimit(b hostmem.Budget) int {
	if c.settings.MaxSessions > 0 {
		return c.settings.MaxSessions
	}
	spw := max(c.settings.SessionsPerWorker, 1)
	perWorker := c.dataLimit()
	if perWorker <= 0 { // no OS limit: the sessions' and the runtime's
		perWorker = c.settings.Limits().MemoryBytes*int64(spw) + workerMemoryOverhead
	}
	workers := hostmem.Fit(b.Bytes, perWorker)
	if workers == 0 {
		workers = fallbackWorkers
	}
	return max(workers*spw, c.settings.MinWorkers*spw, 1)
}

// fallbackWorkers is the worker limit where the machine's memory cannot
// be learnt (not Linux).
const fallbackWorkers = 16

// workers is the most workers alive at once.
func (c Config) workers() int {
	if c.maxWorkers > 0 {
		return c.maxWorkers
	}
	return max(c.settings.MaxSessions/max(c.settings.SessionsPerWorker, 1), 1)
}

// recycle is how many sessions a worker hosts before it is retired.
func (c Config) recycle() int {
	if c.settings.RecycleAfter > 0 {
		return c.settings.RecycleAfter
	}
	return c.settings.SessionsPerWorker
}

func (c Config) validate() error {
	if err := c.settings.Validate(); err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("subprocess adapter config: "+format, args...)
	}
	switch {
	case len(c.command) == 0 || c.command[0] == "":
		return bad("no worker command")
	case c.maxWorkers < 0 || c.maxWorkers > 0 && c.settings.MinWorkers > c.maxWorkers:
		return bad("workers: need 0 <= min <= max (got %d, %d)", c.settings.MinWorkers, c.maxWorkers)
	case c.killGrace <= 0 || c.startTimeout <= 0 || c.healthInterval <= 0:
		return bad("durations must be positive")
	}
	for _, kv := range c.traceEnv {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "OTEL_") || strings.IndexByte(kv, 0) >= 0 {
			return bad("worker trace environment: %q is not an OTEL_* variable", name)
		}
	}
	return nil
}

// wasmConfig is the configuration of the runtime a worker hosts.
func (c Config) wasmConfig() wasm.Config {
	return wasm.NewConfig().WithSettings(c.settings.Settings)
}

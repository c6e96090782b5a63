package wasm

import (
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
	"github.com/codeport/codeport/port"
)

// RuntimeVersion is the CPython release of the embedded runtime (see
// internal/cpython: built by its build.sh, committed, embedded).
const RuntimeVersion = cpython.Version

// Config configures the adapter. The zero value is not usable; start from
// NewConfig and change what you need with the With methods, each of which
// returns a modified copy.
type Config struct {
	compileCache   string
	sessionsDir    string
	defaultTimeout time.Duration
	maxTimeout     time.Duration
	memoryBytes    int64
	outputBytes    int
	sourceBytes    int
	workspaceBytes int64
	fileBytes      int64
	maxSessions    int
	defaultIdle    time.Duration
	maxIdle        time.Duration
	maxLifetime    time.Duration
	retryAfter     time.Duration
	reapInterval   time.Duration
	poolSize       int
	poolRefill     int
	warmModules    []string
	registerer     prometheus.Registerer
	logger         *slog.Logger
}

// NewConfig returns the defaults: 30 s per call (at most 300 s), 256 MiB of
// memory per session, 1 MiB of output per stream per call, 1 MiB of source,
// 100 MiB of workspace per session, 50 MiB per uploaded file, 64 sessions,
// sessions reclaimed after 10 minutes idle (hints up to 1 hour) or 1 hour
// of life.
func NewConfig() Config {
	return Config{
		compileCache:   DefaultCompilationCacheDir(),
		defaultTimeout: 30 * time.Second,
		maxTimeout:     300 * time.Second,
		memoryBytes:    256 << 20,
		outputBytes:    1 << 20,
		sourceBytes:    1 << 20,
		workspaceBytes: 100 << 20,
		fileBytes:      50 << 20,
		maxSessions:    64,
		defaultIdle:    10 * time.Minute,
		maxIdle:        time.Hour,
		maxLifetime:    time.Hour,
		retryAfter:     time.Second,
		reapInterval:   time.Second,
		poolSize:       2,
		poolRefill:     1,
		warmModules:    defaultWarmModules,
		logger:         slog.New(slog.DiscardHandler),
	}
}

// defaultWarmModules are imported by the interpreter image every session
// starts from: standard modules models reach for, whose first import costs
// milliseconds each in WebAssembly.
var defaultWarmModules = []string{
	"collections", "csv", "dataclasses", "datetime", "decimal", "fractions",
	"functools", "itertools", "json", "math", "pathlib", "random", "re",
	"statistics", "string", "textwrap", "typing",
}

// DefaultCompilationCacheDir is where compiled code is kept when no
// directory is configured: codeport/wazero under the user's cache directory
// (for example ~/.cache/codeport/wazero), or "" (compile in memory at every
// start) when there is no such directory.
func DefaultCompilationCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "codeport", "wazero")
}

// WithCompilationCacheDir sets where wazero keeps compiled code between
// runs; "" compiles in memory at every start. Compiling the interpreter
// takes seconds; loading it from the cache, a fraction of one.
func (c Config) WithCompilationCacheDir(dir string) Config { c.compileCache = dir; return c }

// WithSessionsDir sets the host directory under which each session gets its
// workspace. By default a private directory is made under os.TempDir and
// removed on Close.
func (c Config) WithSessionsDir(dir string) Config { c.sessionsDir = dir; return c }

// WithTimeouts sets the timeout of a call that asks for none, and the
// ceiling a requested timeout is clamped to.
func (c Config) WithTimeouts(defaultTimeout, maxTimeout time.Duration) Config {
	c.defaultTimeout, c.maxTimeout = defaultTimeout, maxTimeout
	return c
}

// WithMemoryLimit sets the linear memory one session's interpreter may use,
// rounded down to 64 KiB pages.
func (c Config) WithMemoryLimit(bytes int64) Config { c.memoryBytes = bytes; return c }

// WithOutputLimit sets the bytes kept per stream (stdout, stderr) per call.
func (c Config) WithOutputLimit(bytes int) Config { c.outputBytes = bytes; return c }

// WithSourceLimit sets the largest code (or command) accepted in one call.
func (c Config) WithSourceLimit(bytes int) Config { c.sourceBytes = bytes; return c }

// WithWorkspaceLimit sets the bytes of files one session may hold, its
// temporary directory included.
func (c Config) WithWorkspaceLimit(bytes int64) Config { c.workspaceBytes = bytes; return c }

// WithFileLimit sets the largest file PutFile accepts and the editor
// handles.
func (c Config) WithFileLimit(bytes int64) Config { c.fileBytes = bytes; return c }

// WithMaxSessions sets how many sessions may live at once.
func (c Config) WithMaxSessions(n int) Config { c.maxSessions = n; return c }

// WithSessionLifetimes sets the idle timeout of a session that gives no
// hint, the ceiling of idle timeout hints, and the maximum lifetime (also
// the ceiling of lifetime hints).
func (c Config) WithSessionLifetimes(defaultIdle, maxIdle, maxLifetime time.Duration) Config {
	c.defaultIdle, c.maxIdle, c.maxLifetime = defaultIdle, maxIdle, maxLifetime
	return c
}

// WithRetryAfter sets the retry hint given with a capacity refusal.
func (c Config) WithRetryAfter(d time.Duration) Config { c.retryAfter = d; return c }

// WithWarmPool keeps size interpreters ready ahead of demand, so that
// CreateSession hands one out instead of restoring one while the caller
// waits, and sets the modules the interpreter image has imported (nil keeps
// the default list; an empty list imports none). Every session starts from
// that image, made once per process, so the modules cost nothing per
// session. A pooled interpreter has run nobody's code; a size of 0 turns
// the pool off.
func (c Config) WithWarmPool(size int, modules []string) Config {
	c.poolSize = size
	if modules != nil {
		c.warmModules = append([]string(nil), modules...)
	}
	return c
}

// WarmPoolSize is the number of interpreters kept booted ahead of demand.
func (c Config) WarmPoolSize() int { return c.poolSize }

// WithWarmPoolRefill sets how many interpreters the pool boots at once when
// it refills (default 1, so a burst of sessions does not take every core).
// 0 fills the pool once and never refills it: for a host that will only
// ever start as many sessions as the pool holds (a subprocess worker that
// dies with its session), where a refill would boot an interpreter nobody
// takes.
func (c Config) WithWarmPoolRefill(n int) Config { c.poolRefill = n; return c }

// WithMetrics registers the adapter's metrics with reg.
func (c Config) WithMetrics(reg prometheus.Registerer) Config { c.registerer = reg; return c }

// WithLogger sets the logger. The adapter logs session ids, outcomes and
// durations, never code, output or file contents.
func (c Config) WithLogger(l *slog.Logger) Config {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	c.logger = l
	return c
}

// Limits reports the limits this configuration puts in force, as the
// capability description publishes them.
func (c Config) Limits() port.Limits {
	return port.Limits{
		DefaultTimeout:     c.defaultTimeout,
		MaxTimeout:         c.maxTimeout,
		MemoryBytes:        c.memoryBytes / wasmPage * wasmPage,
		OutputBytes:        int64(c.outputBytes),
		SourceBytes:        int64(c.sourceBytes),
		WorkspaceBytes:     c.workspaceBytes,
		FileBytes:          c.fileBytes,
		MaxSessions:        c.maxSessions,
		DefaultIdleTimeout: c.defaultIdle,
		MaxIdleTimeout:     c.maxIdle,
		MaxLifetime:        c.maxLifetime,
	}
}

// wasmPage is the unit of WebAssembly memory.
const wasmPage = 65536

// minMemoryBytes is the smallest memory limit: the interpreter image is 20
// MiB (the module's initial memory, which holds the C stack, CPython and
// the imported modules), and a program needs room beyond it.
const minMemoryBytes = 32 << 20

// withReapInterval sets how often abandoned sessions are looked for; tests
// shorten it.
func (c Config) withReapInterval(d time.Duration) Config { c.reapInterval = d; return c }

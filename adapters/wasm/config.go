package wasm

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
	"github.com/codeport/codeport/internal/bytesize"
	"github.com/codeport/codeport/internal/hostmem"
	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

// RuntimeVersion is the CPython release of the embedded runtime (see
// internal/cpython: built by its runtime/build.sh, committed, embedded).
const RuntimeVersion = cpython.Version

// Settings are the adapter's settings: the one place they are defined.
// Flags, CODEPORT_* environment variables and YAML files set them through
// their `setting` tags (see package binding), and a subprocess worker
// receives them as JSON; all of them are checked by Validate. Sizes are in
// bytes. Settings is plain data, to be filled, sent and checked; a Config
// takes them only through its With methods: WithSettings for a whole
// Settings, the others for one setting each.
type Settings struct {
	CompilationCacheDir string        `json:"compilation_cache_dir,omitempty" setting:"compile-cache-dir" help:"wazero compilation cache (empty: compile in memory at every start)"`
	ImageCache          bool          `json:"image_cache" setting:"image-cache" help:"keep the interpreter image in the compilation cache, so that a start maps it instead of booting CPython (processes sharing the cache then share the image's str hash secret)"`
	SessionsDir         string        `json:"sessions_dir,omitempty" setting:"sessions-dir" help:"host directory for session workspaces (empty: a private temporary directory)"`
	Timeout             time.Duration `json:"timeout" setting:"timeout" help:"execution timeout of a call that asks for none"`
	MaxTimeout          time.Duration `json:"max_timeout" setting:"max-timeout" help:"ceiling a requested timeout is clamped to"`
	MemoryLimit         int64         `json:"memory_limit" setting:"memory-limit" unit:"bytes" help:"memory per session"`
	OutputLimit         int64         `json:"output_limit" setting:"output-limit" unit:"bytes" help:"output kept per stream per call"`
	SourceLimit         int64         `json:"source_limit" setting:"source-limit" unit:"bytes" help:"largest code or command accepted in one call"`
	WorkspaceLimit      int64         `json:"workspace_limit" setting:"workspace-limit" unit:"bytes" help:"files per session, temporary files included"`
	WorkspaceEntries    int           `json:"workspace_entries" setting:"workspace-entries" help:"files and directories per session, temporary ones included (each directory also takes 4KiB of workspace-limit)"`
	FileLimit           int64         `json:"file_limit" setting:"file-limit" unit:"bytes" help:"largest uploaded file"`
	MaxSessions         int           `json:"max_sessions" setting:"max-sessions" help:"sessions alive at once (0: as many as fit in this machine's or container's memory at memory-limit each, after an eighth kept back, at least 512MiB)"`
	IdleTimeout         time.Duration `json:"idle_timeout" setting:"idle-timeout" help:"idle time after which a session is reclaimed, when it gives no hint"`
	MaxIdleTimeout      time.Duration `json:"max_idle_timeout" setting:"max-idle-timeout" help:"ceiling of idle timeout hints"`
	MaxLifetime         time.Duration `json:"max_lifetime" setting:"max-lifetime" help:"longest a session lives (also the ceiling of lifetime hints)"`
	WarmPool            int           `json:"warm_pool" setting:"warm-pool" help:"interpreters restored ahead of demand, so a session need not wait for one (0: off)"`
	WarmPoolRefill      int           `json:"warm_pool_refill" setting:"warm-pool-refill" help:"interpreters the warm pool restores at once when it refills (0: fill once, never refill)"`
	WarmModules         ModuleList    `json:"warm_modules" setting:"warm-modules" help:"comma-separated modules the interpreter image imports, so every session has them (none: import nothing; empty: the default list)"`
	Profile             string        `json:"profile,omitempty" setting:"profile" help:"the runtime sessions run: default (CPython and its standard library) or scientific (the same CPython with numpy, pandas, sympy and Pillow built in; a Go program links it by importing adapters/wasm/scientific); empty: default"`
	HibernateAfter      time.Duration `json:"hibernate_after,omitempty" setting:"hibernate-after" help:"a session idle this long is saved to disk and its memory released; its next call restores it (0: never)"`
	HibernateDir        string        `json:"hibernate_dir,omitempty" setting:"hibernate-dir" help:"directory hibernated sessions are kept in; with it, closing (SIGTERM) hibernates every live session and the next start takes them back, so sessions survive a restart (empty: in the sessions directory, ended with the process)"`
	CompactSnapshots    bool          `json:"compact_snapshots,omitempty" setting:"compact-snapshots" help:"compress a snapshot's memory wherever compression shrinks it: a Python heap's snapshot is about half the size, and its restore takes about half as much CPU again (false: only blocks that shrink to a quarter, which restores from local bytes fastest; hibernated sessions are always compact)"`
	DisplayValues       bool          `json:"display_values" setting:"display-values" help:"show a code_execution cell's last expression as Jupyter does: its repr on stdout, and image, SVG or HTML representations (and display() calls) as produced files; false keeps stdout to what the program printed (a call can ask otherwise)"`
	InlineImages        int           `json:"inline_images" setting:"inline-images" help:"images (PNG, JPEG, GIF, WebP) a call's result carries inline at most, so a chart comes back with the call that drew it; the others stay produced files, fetched by file id, and stderr says which (0: none inline)"`
	InlineImageBytes    int64         `json:"inline_image_bytes" setting:"inline-image-bytes" unit:"bytes" help:"bytes of images a call's result carries inline at most (see inline-images)"`
	// RetryAfter is the retry hint given with a capacity refusal.
	RetryAfter time.Duration `json:"retry_after"`
}

// DefaultSettings are the defaults: 30 s per call (at most 300 s), 256 MiB
// of memory per session, 1 MiB of output per stream per call, 1 MiB of
// source, 100 MiB and 10,000 files and directories of workspace per
// session, 50 MiB per uploaded file, as many sessions as fit in the
// machine's memory at their memory limit (see MaxSessions), sessions reclaimed after
// 10 minutes idle (hints up to 1 hour) or 1 hour of life, two interpreters
// kept warm, compiled code cached under the user's cache directory, up to
// 8 images and 2 MiB of them inline in a result.
func DefaultSettings() Settings {
	return Settings{
		CompilationCacheDir: DefaultCompilationCacheDir(),
		ImageCache:          true,
		Timeout:             30 * time.Second,
		MaxTimeout:          300 * time.Second,
		MemoryLimit:         256 << 20,
		OutputLimit:         1 << 20,
		SourceLimit:         1 << 20,
		WorkspaceLimit:      100 << 20,
		WorkspaceEntries:    DefaultWorkspaceEntries,
		FileLimit:           50 << 20,
		IdleTimeout:         10 * time.Minute,
		MaxIdleTimeout:      time.Hour,
		MaxLifetime:         time.Hour,
		WarmPool:            2,
		WarmPoolRefill:      1,
		RetryAfter:          time.Second,
		DisplayValues:       true,
		InlineImages:        8,
		InlineImageBytes:    2 << 20,
	}
}

// Validate reports every setting out of range.
func (s Settings) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if s.Timeout <= 0 || s.MaxTimeout <= 0 || s.Timeout > s.MaxTimeout {
		bad("timeout must be positive and at most max-timeout")
	}
	if s.MemoryLimit < minMemoryBytes {
		bad("memory-limit below %s (the interpreter starts with 20 MiB)", bytesize.Format(minMemoryBytes))
	}
	if s.MemoryLimit > 4<<30 {
		bad("memory-limit above 4 GiB (wasm32 addresses 4 GiB)")
	}
	if s.OutputLimit <= 0 || s.SourceLimit <= 0 || s.WorkspaceLimit <= 0 || s.FileLimit <= 0 {
		bad("output-limit, source-limit, workspace-limit and file-limit must be positive")
	}
	if s.WorkspaceEntries <= 0 {
		bad("workspace-entries must be positive")
	}
	if s.OutputLimit > 1<<30 || s.SourceLimit > 1<<30 {
		bad("output-limit and source-limit must be at most 1GiB")
	}
	if s.MaxSessions < 0 {
		bad("max-sessions must be positive, or 0 to fit the machine's memory")
	}
	if s.IdleTimeout <= 0 || s.MaxIdleTimeout <= 0 || s.MaxLifetime <= 0 || s.IdleTimeout > s.MaxIdleTimeout {
		bad("idle-timeout, max-idle-timeout and max-lifetime must be positive, idle-timeout at most max-idle-timeout")
	}
	if s.WarmPool < 0 || s.WarmPoolRefill < 0 {
		bad("warm-pool and warm-pool-refill must be 0 or more")
	}
	if s.RetryAfter <= 0 {
		bad("the retry hint must be positive")
	}
	if s.InlineImages < 0 || s.InlineImageBytes < 0 || s.InlineImageBytes > maxInlineImageBytes {
		bad("inline-images must be 0 or more, inline-image-bytes from 0 to %s", bytesize.Format(maxInlineImageBytes))
	}
	if s.HibernateAfter < 0 {
		bad("hibernate-after must be 0 (never) or positive")
	}
	if _, err := s.runtime(); err != nil {
		errs = append(errs, err)
	}
	for _, m := range s.WarmModules {
		if !validModule(m) {
			bad("warm-modules: %q is not a module name", m)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("wasm adapter settings: %w", err)
	}
	return nil
}

// Limits reports the limits these settings put in force, as the
// capability description publishes them and the port enforces them.
func (s Settings) Limits() port.Limits {
	return port.Limits{
		DefaultTimeout:     s.Timeout,
		MaxTimeout:         s.MaxTimeout,
		MemoryBytes:        s.MemoryLimit / wasmPage * wasmPage,
		OutputBytes:        s.OutputLimit,
		SourceBytes:        s.SourceLimit,
		WorkspaceBytes:     s.WorkspaceLimit,
		WorkspaceEntries:   s.WorkspaceEntries,
		FileBytes:          s.FileLimit,
		MaxSessions:        s.SessionLimit(),
		DefaultIdleTimeout: s.IdleTimeout,
		MaxIdleTimeout:     s.MaxIdleTimeout,
		MaxLifetime:        s.MaxLifetime,
	}
}

// fallbackMaxSessions is the session limit where the machine's memory
// cannot be learnt (not Linux).
const fallbackMaxSessions = 64

// SessionLimit is MaxSessions, or where it is 0, how many sessions fit
// in the memory this process may count on (the machine's, or its
// cgroup's limit) at MemoryLimit each, after hostmem.Reserve: a node
// that admits no more than fit cannot be driven out of memory by its
// sessions. Idle sessions use far less (about 4.5 MiB, BenchmarkScale),
// so an operator who knows the workload may set more, and
// hibernate-after keeps idle ones on disk.
func (s Settings) SessionLimit() int {
	if s.MaxSessions > 0 {
		return s.MaxSessions
	}
	return s.sessionLimit(hostmem.Read())
}

// sessionLimit is SessionLimit within the budget b, read once by the
// caller that also logs it.
func (s Settings) sessionLimit(b hostmem.Budget) int {
	if s.MaxSessions > 0 {
		return s.MaxSessions
	}
	if n := hostmem.Fit(b.Bytes, s.MemoryLimit); n > 0 {
		return n
	}
	return fallbackMaxSessions
}

// warmModules are the modules the image of runtime py imports: unless
// configured, the standard modules models reach for and the runtime's
// packages.
func (s Settings) warmModules(py cpython.Runtime) []string {
	if s.WarmModules == nil {
		return append(slices.Clone(defaultWarmModules), py.Warm...)
	}
	return s.WarmModules
}

// ModuleList is a list of Python modules, written comma-separated. Empty
// text is no list (nil: the default applies); "none" is the empty list.
type ModuleList []string

// UnmarshalText reads "a,b.c", "none" or "".
func (l *ModuleList) UnmarshalText(b []byte) error {
	switch v := strings.TrimSpace(string(b)); v {
	case "":
		*l = nil
	case "none":
		*l = ModuleList{}
	default:
		var out ModuleList
		for m := range strings.SplitSeq(v, ",") {
			m = strings.TrimSpace(m)
			if !validModule(m) {
				return fmt.Errorf("want comma-separated module names, got %q", m)
			}
			out = append(out, m)
		}
		*l = out
	}
	return nil
}

// MarshalText writes the list as UnmarshalText reads it.
func (l ModuleList) MarshalText() ([]byte, error) {
	if l != nil && len(l) == 0 {
		return []byte("none"), nil
	}
	return []byte(strings.Join(l, ",")), nil
}

// validModule reports whether m is a dotted Python module name.
func validModule(m string) bool {
	if m == "" {
		return false
	}
	for part := range strings.SplitSeq(m, ".") {
		if part == "" || part[0] >= '0' && part[0] <= '9' {
			return false
		}
		for _, r := range part {
			if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
				return false
			}
		}
	}
	return true
}

// Config configures the adapter: its Settings, plus what cannot be a
// setting (a logger, a metrics registry). Start from NewConfig and set
// what differs with the With methods, each of which returns a modified
// copy: WithSettings for the whole set (as package binding does, from
// flags, environment and files), the others for one setting each. The
// settings are not fields of Config, so that there is one way to set
// each, and a Config handed on cannot be changed behind its holder.
type Config struct {
	settings     Settings
	reapInterval time.Duration
	registerer   prometheus.Registerer
	logger       *slog.Logger
	lazyShell    bool
}

// NewConfig returns DefaultSettings, no metrics and no logs.
func NewConfig() Config {
	return Config{settings: DefaultSettings(), reapInterval: time.Second, logger: slog.New(slog.DiscardHandler)}
}

// WithSettings replaces every setting with s: the way to apply settings
// read from flags, CODEPORT_* environment variables or YAML (package
// binding), or received by a worker. New validates them. The With
// methods that follow each set one, or a few that go together.
func (c Config) WithSettings(s Settings) Config {
	s.WarmModules = slices.Clone(s.WarmModules)
	c.settings = s
	return c
}

// Settings returns a copy of the settings c holds: to check them
// (Validate), read the limits they put in force (Limits), or hand them
// on (the subprocess adapter sends them to its workers). Changing the
// copy changes nothing in c; WithSettings applies it.
func (c Config) Settings() Settings {
	s := c.settings
	s.WarmModules = slices.Clone(s.WarmModules)
	return s
}

// defaultWarmModules are imported by the interpreter image every session
// starts from: standard modules models reach for, whose first import costs
// milliseconds each in WebAssembly.
var defaultWarmModules = []string{
	"asyncio", "collections", "csv", "dataclasses", "datetime", "decimal", "fractions",
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
func (c Config) WithCompilationCacheDir(dir string) Config {
	c.settings.CompilationCacheDir = dir
	return c
}

// WithSessionsDir sets the host directory under which each session gets its
// workspace. By default a private directory is made under os.TempDir and
// removed on Close.
func (c Config) WithSessionsDir(dir string) Config { c.settings.SessionsDir = dir; return c }

// WithTimeouts sets the timeout of a call that asks for none, and the
// ceiling a requested timeout is clamped to.
func (c Config) WithTimeouts(defaultTimeout, maxTimeout time.Duration) Config {
	c.settings.Timeout, c.settings.MaxTimeout = defaultTimeout, maxTimeout
	return c
}

// WithMemoryLimit sets the linear memory one session's interpreter may use,
// rounded down to 64 KiB pages.
func (c Config) WithMemoryLimit(bytes int64) Config { c.settings.MemoryLimit = bytes; return c }

// WithOutputLimit sets the bytes kept per stream (stdout, stderr) per call.
func (c Config) WithOutputLimit(bytes int64) Config { c.settings.OutputLimit = bytes; return c }

// WithSourceLimit sets the largest code (or command) accepted in one call.
func (c Config) WithSourceLimit(bytes int64) Config { c.settings.SourceLimit = bytes; return c }

// WithWorkspaceLimit sets the bytes of files one session may hold, its
// temporary directory included.
func (c Config) WithWorkspaceLimit(bytes int64) Config { c.settings.WorkspaceLimit = bytes; return c }

// WithWorkspaceEntries sets how many files and directories one session
// may hold, its temporary directory included. Each directory also takes
// workspace.DirBytes of the workspace limit.
func (c Config) WithWorkspaceEntries(n int) Config { c.settings.WorkspaceEntries = n; return c }

// WithFileLimit sets the largest file PutFile accepts and the editor
// handles.
func (c Config) WithFileLimit(bytes int64) Config { c.settings.FileLimit = bytes; return c }

// WithMaxSessions sets how many sessions may live at once.
func (c Config) WithMaxSessions(n int) Config { c.settings.MaxSessions = n; return c }

// WithSessionLifetimes sets the idle timeout of a session that gives no
// hint, the ceiling of idle timeout hints, and the maximum lifetime (also
// the ceiling of lifetime hints).
func (c Config) WithSessionLifetimes(defaultIdle, maxIdle, maxLifetime time.Duration) Config {
	c.settings.IdleTimeout, c.settings.MaxIdleTimeout, c.settings.MaxLifetime = defaultIdle, maxIdle, maxLifetime
	return c
}

// WithDisplayValues sets whether a code_execution cell's last expression
// is displayed, as in Jupyter, when a call does not say (on by default).
func (c Config) WithDisplayValues(on bool) Config { c.settings.DisplayValues = on; return c }

// WithProfile chooses the runtime sessions run (see Profiles): "default",
// CPython and its standard library, or "scientific", the same CPython
// with numpy, pandas, sympy and Pillow built in, whose module is larger (longer to
// compile the first time, then cached) and whose image holds them already
// imported. The scientific profile is linked into a program that imports
// adapters/wasm/scientific; without it, Validate refuses the name.
func (c Config) WithProfile(name string) Config { c.settings.Profile = name; return c }

// WithInlineImages bounds the images a call's result carries inline
// (port.OutputFile.Data): at most n of them, bytes in all. Images over the
// bound stay produced files; n = 0 inlines none.
func (c Config) WithInlineImages(n int, bytes int64) Config {
	c.settings.InlineImages, c.settings.InlineImageBytes = n, bytes
	return c
}

// maxInlineImageBytes caps inline-image-bytes: a result is one message,
// held whole by every hop that relays it.
const maxInlineImageBytes = 64 << 20

// WithHibernation saves sessions idle for after to disk, releasing their
// memory (0: never), in dir; a dir of their own also keeps every live
// session across a restart (see Settings.HibernateDir).
func (c Config) WithHibernation(after time.Duration, dir string) Config {
	c.settings.HibernateAfter, c.settings.HibernateDir = after, dir
	return c
}

// WithCompactSnapshots compresses a snapshot's memory wherever that
// shrinks it, for snapshots that travel (a network, a remote store): about
// half the bytes of a Python heap, for about half as much CPU again per restore.
// Without it, a block is stored compressed only where it shrinks to a
// quarter, which restores from local bytes fastest (see
// Settings.CompactSnapshots). Hibernated sessions are compact either way.
func (c Config) WithCompactSnapshots(on bool) Config { c.settings.CompactSnapshots = on; return c }

// WithRetryAfter sets the retry hint given with a capacity refusal.
func (c Config) WithRetryAfter(d time.Duration) Config { c.settings.RetryAfter = d; return c }

// WithWarmPool keeps size interpreters ready ahead of demand, so that
// CreateSession hands one out instead of restoring one while the caller
// waits, and sets the modules the interpreter image has imported (nil keeps
// the default list; an empty list imports none). Every session starts from
// that image, made once per process, so the modules cost nothing per
// session. A pooled interpreter has run nobody's code; a size of 0 turns
// the pool off.
func (c Config) WithWarmPool(size int, modules []string) Config {
	c.settings.WarmPool = size
	if modules != nil {
		c.settings.WarmModules = append(ModuleList{}, modules...)
	}
	return c
}

// WithWarmPoolRefill sets how many interpreters the pool boots at once when
// it refills (default 1, so a burst of sessions does not take every core).
// 0 fills the pool once and never refills it: for a host that will only
// ever start as many sessions as the pool holds (a subprocess worker that
// dies with its session), where a refill would boot an interpreter nobody
// takes.
func (c Config) WithWarmPoolRefill(n int) Config { c.settings.WarmPoolRefill = n; return c }

// WithShellAtStart sets whether the bash tool's shell is compiled (or
// loaded from the cache) at start with the interpreter, before the
// adapter is ready: the default, so that a node that says it is ready
// answers its first bash call as fast as any other. Off, the shell is
// compiled at the first bash call, which then waits for it (seconds on a
// cold cache), and a process that never runs bash pays neither its time
// nor its memory: for a subprocess worker, whose parent compiled the
// shell into the cache (Precompile) before starting it.
func (c Config) WithShellAtStart(on bool) Config { c.lazyShell = !on; return c }

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

// DefaultWorkspaceEntries is the default entry limit of a session's files:
// ten thousand files and directories are room for any program's work, and
// bound what they cost the host beyond their bytes: at most about 40 MB as
// empty directories (a 4 KiB block each on ext4, charged to the byte limit
// too), about 2.5 MB of inodes (256 bytes each) as empty files. Without
// such a limit the byte limit bounded neither: 51,000 empty files fitted in
// 5 MiB, and 20,000 directories took 79 MB.
const DefaultWorkspaceEntries = 10_000

// workspaceLimitation is the limitation the capability description states
// for the workspace limits, in the words a program's author needs: what
// the limits are, what counts, and what a refusal looks like.
func (s Settings) workspaceLimitation() string {
	return fmt.Sprintf("Files in %s and /tmp share a limit of %s and %d files and directories (each directory also counts %s); "+
		"a write, new file or new directory beyond it fails with OSError errno EIO (\"[Errno 29] I/O error\"), not ENOSPC, which WebAssembly's WASI cannot report here, "+
		"and the call's stderr ends with a note naming the limit",
		workspace.GuestRoot, bytesize.Format(s.WorkspaceLimit), s.WorkspaceEntries, bytesize.Format(workspace.DirBytes))
}

// quotaNote is the note appended to a call's stderr when the quota refused
// a write of the program's: the program saw only EIO, so the cause is
// told here. entries is set when the entry limit refused.
func (s Settings) quotaNote(entries bool) string {
	limit := bytesize.Format(s.WorkspaceLimit)
	if entries {
		limit = fmt.Sprintf("%d files and directories", s.WorkspaceEntries)
	}
	return fmt.Sprintf("[codeport: a write was refused because the session's files reached the workspace limit of %s (/tmp included); the program saw EIO, as WASI has no ENOSPC]", limit)
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

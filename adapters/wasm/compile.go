package wasm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
	"github.com/codeport/codeport/adapters/wasm/internal/shell/wasmshell"
)

// The modules an adapter compiles, as the log and Precompile name them.
const (
	moduleInterpreter = "interpreter"
	moduleShell       = "shell"
)

// CompiledModule is one module Precompile compiled, or found already
// compiled in the cache.
type CompiledModule struct {
	// Name is "interpreter" (with Profile set) or "shell".
	Name    string
	Profile string
	// Bytes is the size of the WebAssembly module.
	Bytes int
	// Duration is how long compiling (or loading) it took.
	Duration time.Duration
	// Compiled is false when the cache held it already.
	Compiled bool
}

// Precompile compiles every module an adapter of cfg runs, the
// interpreter of each profile named (cfg's own when none is) and the bash
// tool's shell, into cfg's compilation cache directory, so that a later
// start (of a server, a worker or `codeport exec`) loads them instead of
// compiling them: a container image built with it starts compiled. It
// compiles with the same code-generation options as the adapter, since a
// cache entry is found only by the module's bytes and those options.
// Modules already in the cache are loaded and reported with Compiled
// false. On an error it returns the modules done before it.
func Precompile(ctx context.Context, cfg Config, profiles ...string) ([]CompiledModule, error) {
	if len(profiles) == 0 {
		profiles = []string{cfg.settings.Profile}
	}
	return precompile(ctx, cfg, profiles)
}

// PrecompileShell is Precompile for the bash tool's shell alone: for a
// process whose workers compile the interpreter themselves (the first
// worker of the subprocess adapter fills the cache for the others) but
// compile the shell only at their first bash call, which then loads it.
func PrecompileShell(ctx context.Context, cfg Config) (CompiledModule, error) {
	mods, err := precompile(ctx, cfg, nil)
	if err != nil {
		return CompiledModule{}, err
	}
	return mods[0], nil
}

// precompile compiles the interpreters of profiles, then the shell, into
// cfg's cache directory, one after the other, each over every core: a
// module compiled is then told apart from one loaded by the entries it
// wrote.
func precompile(ctx context.Context, cfg Config, profiles []string) ([]CompiledModule, error) {
	if err := cfg.settings.Validate(); err != nil {
		return nil, err
	}
	dir := cfg.settings.CompilationCacheDir
	if dir == "" {
		return nil, errors.New("wasm: precompile: no compilation cache directory is configured (compile-cache-dir)")
	}
	var runtimes []cpython.Runtime
	for _, p := range profiles {
		py, err := cfg.WithProfile(p).settings.runtime()
		if err != nil {
			return nil, err
		}
		runtimes = append(runtimes, py)
	}
	settleWazeroVersion()
	cache, err := openCache(dir)
	if err != nil {
		return nil, fmt.Errorf("wasm: precompile: the compilation cache %s: %w", dir, err)
	}
	defer cache.Close(ctx)
	var out []CompiledModule
	step := func(m CompiledModule, compile func() error) error {
		before := cacheEntries(dir)
		t := time.Now()
		if err := compile(); err != nil {
			return fmt.Errorf("wasm: precompile the %s: %w", m.Name, err)
		}
		m.Duration, m.Compiled = time.Since(t), written(before, cacheEntries(dir)) > 0
		out = append(out, m)
		return nil
	}
	for _, py := range runtimes {
		if err := step(CompiledModule{Name: moduleInterpreter, Profile: py.Profile, Bytes: len(py.Module)}, func() error {
			rt, _, _, err := newInterpreterRuntime(ctx, py, cache, cfg.settings.MemoryLimit)
			if err != nil {
				return err
			}
			return rt.Close(ctx)
		}); err != nil {
			return out, err
		}
	}
	if err := step(CompiledModule{Name: moduleShell, Bytes: wasmshell.ModuleSize()}, func() error {
		e, err := compileShell(ctx, cache, cfg.settings.MemoryLimit, nil, false) // compiled only, never run
		if err != nil {
			return err
		}
		return e.Close(ctx)
	}); err != nil {
		return out, err
	}
	return out, nil
}

// cacheEntries fingerprints the compiled modules in a wazero cache
// directory (wazero keeps them one file each, in a folder per wazero
// version; files being written end in .tmp): a module compiled, rather
// than loaded, adds an entry or rewrites a stale one.
func cacheEntries(dir string) map[string]string {
	out := map[string]string{}
	versions, _ := os.ReadDir(dir)
	for _, v := range versions {
		if !v.IsDir() || !strings.HasPrefix(v.Name(), "wazero-") {
			continue // the interpreter images and the marks are not compiled code
		}
		files, _ := os.ReadDir(filepath.Join(dir, v.Name()))
		for _, f := range files {
			if !f.Type().IsRegular() || strings.HasSuffix(f.Name(), ".tmp") {
				continue
			}
			if fi, err := f.Info(); err == nil {
				out[filepath.Join(v.Name(), f.Name())] = fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
			}
		}
	}
	return out
}

// Compiled modules are kept as interpreter images are (imageKeepUnused,
// imageKeepTemp): entries are keyed by the module's bytes, so every
// runtime upgrade leaves the last build's behind (56 MB for the default
// interpreter, 145 MB for the scientific one), and every wazero upgrade a
// folder of them, in a directory nothing else cleans; a build in use
// marks what it loads (markUsed). A module pruned while still wanted (a
// profile nobody started for that long) is only compiled again.

// loadedDirName is the folder of the compilation cache that holds a mark
// for each compiled module loaded: an empty file of the entry's name,
// written at each load. The entry itself is not touched: in a container
// whose image holds the compiled code, changing a file of the image's
// layer copies all of it (56 MB and more) into the container's.
const loadedDirName = "codeport-loaded"

// markUsed records that the compiled module in the cache file f (which
// wazero opened under its version's folder of the cache) was loaded, for
// pruneCompiled. A cache it cannot write is left as it is.
func markUsed(f *os.File) {
	version := filepath.Dir(f.Name())
	mark := filepath.Join(filepath.Dir(version), loadedDirName, filepath.Base(f.Name()))
	now := time.Now()
	if os.Chtimes(mark, now, now) == nil {
		return
	}
	if os.MkdirAll(filepath.Dir(mark), 0o700) == nil {
		_ = os.WriteFile(mark, nil, 0o600)
	}
}

// pruneCompiled removes from every wazero version's folder under cacheDir
// the compiled modules neither written nor loaded (markUsed) for
// imageKeepUnused before now, with their marks, and compiles'
// temporary files older than imageKeepTemp; it returns how many
// compiled modules and temporary files it removed. Folders are kept, even
// empty ones: a process of that version may be about to write into the
// folder it made at its start. A module another process loads meanwhile
// may still go: that process compiles it again next time.
func pruneCompiled(cacheDir string, now time.Time) (int, error) {
	versions, err := os.ReadDir(cacheDir)
	if err != nil {
		return 0, err
	}
	marks := filepath.Join(cacheDir, loadedDirName)
	lastUsed := func(name string, info os.FileInfo) time.Time {
		t := info.ModTime()
		if m, err := os.Stat(filepath.Join(marks, name)); err == nil && m.ModTime().After(t) {
			t = m.ModTime()
		}
		return t
	}
	removed := 0
	for _, v := range versions {
		if !v.IsDir() || !strings.HasPrefix(v.Name(), "wazero-") {
			continue // the interpreter images (pruneImages), the marks, or not wazero's
		}
		dir := filepath.Join(cacheDir, v.Name())
		files, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, f := range files {
			info, err := f.Info()
			if err != nil || !f.Type().IsRegular() {
				continue
			}
			if strings.HasSuffix(f.Name(), ".tmp") {
				if now.Sub(info.ModTime()) > imageKeepTemp && os.Remove(filepath.Join(dir, f.Name())) == nil {
					removed++
				}
				continue
			}
			if now.Sub(lastUsed(f.Name(), info)) > imageKeepUnused && os.Remove(filepath.Join(dir, f.Name())) == nil {
				removed++
				_ = os.Remove(filepath.Join(marks, f.Name()))
			}
		}
	}
	// Marks whose module is gone (removed by hand, or by another wazero
	// version's cleaning) go once they are as old.
	if files, err := os.ReadDir(marks); err == nil {
		for _, f := range files {
			if info, err := f.Info(); err == nil && f.Type().IsRegular() && now.Sub(info.ModTime()) > imageKeepUnused {
				_ = os.Remove(filepath.Join(marks, f.Name()))
			}
		}
	}
	return removed, nil
}

// written counts the entries of after that are not in before as they were.
func written(before, after map[string]string) int {
	n := 0
	for k, v := range after {
		if before[k] != v {
			n++
		}
	}
	return n
}

// compileRate is about how many bytes of WebAssembly one core compiles
// per second (wazero 1.12's optimising compiler, measured on the quiet
// 2-core development machine: the interpreter and the shell, 20.4 MB, in
// 4.5 s on both cores); the start-up log uses it to say how long a first
// start takes.
const compileRate = 2_200_000

// progress reports a start-up's compilation: if it is still compiling
// after a second (loading from the cache takes less), what it is doing
// and about how long it takes; then every 5 seconds, what is left.
type progress struct {
	mu      sync.Mutex
	pending []string // modules not compiled yet

	quit chan struct{}
	wg   sync.WaitGroup
}

// progressFirst and progressEvery are when start-up progress is logged.
const (
	progressFirst = time.Second
	progressEvery = 5 * time.Second
)

// startProgress reports on modules (moduleInterpreter, moduleShell) being
// compiled for the runtime py into cacheDir ("": in memory) until stop.
func startProgress(logger *slog.Logger, cacheDir string, py cpython.Runtime, modules []string) *progress {
	p := &progress{pending: slices.Clone(modules), quit: make(chan struct{})}
	size := len(py.Module)
	if slices.Contains(modules, moduleShell) {
		size += wasmshell.ModuleSize()
	}
	cores := runtime.GOMAXPROCS(0)
	estimate := (time.Duration(size) * time.Second / time.Duration(compileRate*cores)).Round(time.Second)
	where := "compiled in memory at every start (no compile-cache-dir)"
	if cacheDir != "" {
		where = "cached in " + cacheDir + " for later starts; `codeport compile` fills it ahead of time"
	}
	start := time.Now()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		first := time.NewTimer(progressFirst)
		defer first.Stop()
		select {
		case <-p.quit:
			return
		case <-first.C:
		}
		logger.Info(fmt.Sprintf("preparing %s: a first start of this build compiles them (about %s on %d cores); %s", p.what(py.Profile), estimate, cores, where),
			"modules", p.left(), "estimate_seconds", estimate.Seconds(), "cores", cores)
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-p.quit:
				return
			case <-tick.C:
				logger.Info("still preparing", "modules", p.left(), "elapsed_seconds", time.Since(start).Round(time.Second).Seconds(),
					"estimate_seconds", estimate.Seconds())
			}
		}
	}()
	return p
}

// what names the modules being compiled for a person.
func (p *progress) what(profile string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var parts []string
	for _, m := range p.pending {
		switch m {
		case moduleInterpreter:
			parts = append(parts, fmt.Sprintf("the Python runtime (profile %s)", profile))
		case moduleShell:
			parts = append(parts, "the bash tool's shell")
		}
	}
	return strings.Join(parts, " and ")
}

// left lists the modules not yet compiled.
func (p *progress) left() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.pending, ",")
}

// done records that module m is compiled (or loaded).
func (p *progress) done(m string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = slices.DeleteFunc(p.pending, func(s string) bool { return s == m })
}

// stop ends the reporting goroutine.
func (p *progress) stop() {
	close(p.quit)
	p.wg.Wait()
}

// wazeroVersionOnce makes the first wazero runtime of the process, before
// any is made concurrently: wazero 1.12 keeps its own version in a
// package variable that its first runtime (or cache) writes without a
// lock, so two adapters started at once, or the interpreter and the shell
// compiled side by side, race on it. This works around that dependency's
// global; it holds no state of ours.
var wazeroVersionOnce sync.Once

func settleWazeroVersion() {
	wazeroVersionOnce.Do(func() {
		ctx := context.Background()
		_ = wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler()).Close(ctx)
	})
}

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

// Precompile compiles every module an adapter of cfg runs, the profile's
// interpreter and the bash tool's shell, into cfg's compilation cache
// directory, so that a later start (of a server, a worker or `codeport
// exec`) loads them instead of compiling them: a container image built
// with it starts compiled. It compiles with the same code-generation
// options as the adapter, since a cache entry is found only by the
// module's bytes and those options. Modules already in the cache are
// loaded and reported with Compiled false.
func Precompile(ctx context.Context, cfg Config) ([]CompiledModule, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.CompilationCacheDir == "" {
		return nil, errors.New("wasm: precompile: no compilation cache directory is configured (compile-cache-dir)")
	}
	py, err := cfg.runtime()
	if err != nil {
		return nil, err
	}
	settleWazeroVersion()
	cache, err := openCache(cfg.CompilationCacheDir)
	if err != nil {
		return nil, fmt.Errorf("wasm: precompile: the compilation cache %s: %w", cfg.CompilationCacheDir, err)
	}
	defer cache.Close(ctx)
	var out []CompiledModule
	// One after the other, each over every core: a module compiled is
	// then told apart from one loaded by the entries it added.
	step := func(name string, size int, compile func() error) error {
		before := cacheEntries(cfg.CompilationCacheDir)
		t := time.Now()
		if err := compile(); err != nil {
			return fmt.Errorf("wasm: precompile the %s: %w", name, err)
		}
		m := CompiledModule{Name: name, Bytes: size, Duration: time.Since(t),
			Compiled: written(before, cacheEntries(cfg.CompilationCacheDir)) > 0}
		if name == moduleInterpreter {
			m.Profile = py.Profile
		}
		out = append(out, m)
		return nil
	}
	if err := step(moduleInterpreter, len(py.Module), func() error {
		rt, _, err := newInterpreterRuntime(ctx, py, cache, cfg.MemoryLimit)
		if err != nil {
			return err
		}
		return rt.Close(ctx)
	}); err != nil {
		return out, err
	}
	if err := step(moduleShell, wasmshell.ModuleSize(), func() error {
		e, err := compileShell(ctx, cache, cfg.MemoryLimit)
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
		if !v.IsDir() {
			continue
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
// per second (wazero 1.12's optimising compiler, measured on the 2-core
// development machine: the interpreter's 8.5 MB in about 3 s on both
// cores); the start-up log uses it to say how long a first start takes.
const compileRate = 1_500_000

// progress reports a start-up's compilation: if it is still compiling
// after a second (loading from the cache takes less), what it is doing
// and about how long it takes; then every 5 seconds, what is left.
type progress struct {
	logger  *slog.Logger
	entries func() map[string]string // the cache directory's fingerprint

	mu      sync.Mutex
	pending []string
	took    map[string]time.Duration

	before map[string]string
	quit   chan struct{}
	wg     sync.WaitGroup
}

// progressFirst and progressEvery are when start-up progress is logged.
const (
	progressFirst = time.Second
	progressEvery = 5 * time.Second
)

func startProgress(logger *slog.Logger, cacheDir string, py cpython.Runtime, withShell bool) *progress {
	p := &progress{logger: logger, entries: func() map[string]string { return cacheEntries(cacheDir) },
		pending: []string{moduleInterpreter}, took: map[string]time.Duration{}, quit: make(chan struct{})}
	size := len(py.Module)
	if withShell {
		p.pending = append(p.pending, moduleShell)
		size += wasmshell.ModuleSize()
	}
	p.before = p.entries()
	estimate := time.Duration(float64(size) / float64(compileRate*runtime.GOMAXPROCS(0)) * float64(time.Second)).Round(time.Second)
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
		logger.Info(fmt.Sprintf("preparing %s: a first start of this build compiles them (about %s on %d cores); %s", p.what(py.Profile), estimate, runtime.GOMAXPROCS(0), where),
			"modules", p.left(), "estimate_seconds", estimate.Seconds(), "cores", runtime.GOMAXPROCS(0))
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

// done records that module m is compiled (or loaded), after d.
func (p *progress) done(m string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = slices.DeleteFunc(p.pending, func(s string) bool { return s == m })
	p.took[m] = d
}

// stop ends the reporting goroutine and says how many modules were
// compiled rather than loaded (the entries the cache gained).
func (p *progress) stop() (compiled int) {
	close(p.quit)
	p.wg.Wait()
	return written(p.before, p.entries())
}

// seconds reports how long each module took, for the ready record.
func (p *progress) seconds() []any {
	p.mu.Lock()
	defer p.mu.Unlock()
	var attrs []any
	for _, m := range []string{moduleInterpreter, moduleShell} {
		if d, ok := p.took[m]; ok {
			attrs = append(attrs, m+"_seconds", d.Seconds())
		}
	}
	return attrs
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

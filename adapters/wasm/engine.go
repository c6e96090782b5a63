package wasm

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/google/uuid"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
	"github.com/codeport/codeport/adapters/wasm/internal/guestroot"
	"github.com/codeport/codeport/adapters/wasm/internal/shell/wasmshell"
	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

//go:embed driver.py
var driverSource string

// engine is the compiled interpreter and the image every session starts
// from, shared by every session of an adapter. The module is compiled once
// per process (or loaded from wazero's on-disk cache); the image is made
// once per process by booting a template interpreter, so that nothing
// drawn from randomness at start-up (CPython's str hash secret) is fixed
// in a committed artifact, and a session costs an instantiation and a
// memory restore instead of CPython's start-up.
type engine struct {
	runtime     wazero.Runtime
	rt          cpython.Runtime // the build sessions run
	compiled    wazero.CompiledModule
	cxx         *cxxHost // the host of its C++ exceptions; nil if it has none
	image       *image
	cache       wazero.CompilationCache
	memoryBytes int64
	// root is the guest's "/" around its mounts (instantiate): a path
	// outside them is missing, not a capability error, and /dev/null
	// works.
	root *guestroot.FS

	// build identifies the runtime for session snapshots (buildID).
	buildOnce sync.Once
	build     string

	// The bash tool's shell, a guest of its own runtime (see
	// internal/shell/wasmshell) sharing the cache and the memory limit.
	// It is compiled at start with the interpreter (newEngine), so that a
	// node that says it is ready answers its first bash call as fast as
	// any other; a process configured otherwise (a subprocess worker,
	// most of which never run bash) compiles it at its first bash call
	// (shellEngine) and pays neither its time nor its memory before.
	shellsMu  sync.Mutex
	shells    *wasmshell.Engine
	shellsErr error

	// Recycling (recycle.go): instances reset for the next sessions, the
	// census of a new instance's descriptors they must match, and counts
	// of instances recycled and reused. census is nil when recycling is
	// off (learnHotPages could not set it up).
	// imageCached says the image was read from the compilation cache
	// directory rather than booted (imagecache.go).
	imageCached bool
	spares      chan *interpreter
	sparesMu    sync.Mutex // held to add to spares, and to close them
	census      *fdCensus
	freshCensus []byte
	closed      atomic.Bool
	recycled    atomic.Int64
	reused      atomic.Int64
}

// shellEngine returns the shell guest's engine, compiling it (or loading
// it from the cache) if start-up did not; later calls get the same
// engine, or the same error.
func (e *engine) shellEngine(ctx context.Context) (*wasmshell.Engine, error) {
	e.shellsMu.Lock()
	defer e.shellsMu.Unlock()
	if e.shells == nil && e.shellsErr == nil {
		// Not cancelled with the call that asks first: a later call would
		// get its error.
		e.shells, e.shellsErr = compileShell(context.WithoutCancel(ctx), e.cache, e.memoryBytes, newZones(e.rt.Lib).data, true)
	}
	if e.shellsErr != nil {
		return nil, fmt.Errorf("%w: the shell: %v", port.ErrRuntimeFailure, e.shellsErr)
	}
	return e.shells, nil
}

// compileShell compiles the bash tool's guest, or loads it from cache;
// zone gives its date the time zones (nil: fixed offsets only). run says
// that shells will start from it: their memory then maps the image of the
// memory they start with, as an interpreter's maps the interpreter's image
// (shellImage); compiling alone needs none.
func compileShell(ctx context.Context, cache wazero.CompilationCache, memoryBytes int64, zone func(string) ([]byte, bool), run bool) (*wasmshell.Engine, error) {
	cfg := wasmshell.Config{MemoryBytes: memoryBytes, Cache: cache, Zone: zone}
	if run {
		cfg.Image = newShellImage
	}
	return wasmshell.NewEngine(ctx, cfg)
}

// openCache is the compilation cache in dir, or an in-memory one when dir
// is "" or cannot be used (a read-only cache directory costs start-up
// time, not service: the caller says so).
func openCache(dir string) (wazero.CompilationCache, error) {
	if dir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(dir)
		if err == nil {
			bufferCacheReads(cache)
			return cache, nil
		}
		return wazero.NewCompilationCache(), err
	}
	return wazero.NewCompilationCache(), nil
}

// newInterpreterRuntime is the wazero runtime the interpreter py runs in,
// with WASI instantiated and the module compiled (or loaded from cache),
// and the host of its C++ exceptions if it has any (cxxexceptions.go),
// instantiated too. Precompile and newEngine share it, so that what one
// puts in the cache is what the other looks for: an entry's key is the
// module's bytes and the runtime's code-generation options.
func newInterpreterRuntime(ctx context.Context, py cpython.Runtime, cache wazero.CompilationCache, memoryBytes int64) (wazero.Runtime, wazero.CompiledModule, *cxxHost, error) {
	cfg := wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		// A trap with debug info spends seconds building a DWARF stack
		// trace for this module; we never show it to anyone.
		WithDebugInfoEnabled(false).
		// No WithCloseOnContextDone: it costs about 3x on Python-heavy
		// code (a call out of compiled code at every loop back-edge).
		// The module checks an interrupt global at every loop header
		// instead (see wasmpatch), which the host sets to stop a call.
		WithMemoryLimitPages(uint32(memoryBytes / wasmPage))
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, nil, nil, fmt.Errorf("instantiate WASI: %w", err)
	}
	if err := instantiateFileModes(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, nil, nil, err
	}
	// Compiling the module is the slowest part of a cold start: spread
	// its functions over every core the process may use.
	compiled, err := rt.CompileModule(experimental.WithCompilationWorkers(ctx, runtime.GOMAXPROCS(0)), py.Module)
	if err != nil {
		_ = rt.Close(ctx)
		return nil, nil, nil, fmt.Errorf("compile runtime: %w", err)
	}
	// The default runtime imports neither env nor codeport_cxx: no host
	// for them.
	cxx, err := newCxxHost(compiled, py.Module)
	if err == nil && cxx != nil {
		err = cxx.instantiate(ctx, rt)
	}
	if err != nil {
		_ = rt.Close(ctx)
		return nil, nil, nil, fmt.Errorf("set up C++ exceptions: %w", err)
	}
	return rt, compiled, cxx, nil
}

// newEngine compiles the interpreter py and, with withShell, the shell
// guest at the same time (each loaded instead from the cache in cacheDir
// when it holds them), reporting progress to the logger, then makes the
// interpreter image.
func newEngine(ctx context.Context, py cpython.Runtime, cacheDir string, imageCache bool, memoryBytes int64, warm []string, withShell bool, figures string, logger *slog.Logger) (*engine, error) {
	cache, err := openCache(cacheDir)
	if err != nil {
		logger.Warn("compilation cache unavailable; compiling in memory", "dir", cacheDir, "error", err)
		cacheDir = ""
	}
	modules := []string{moduleInterpreter}
	if withShell {
		modules = append(modules, moduleShell)
	}
	before := cacheEntries(cacheDir)
	prog := startProgress(logger, cacheDir, py, modules)
	var (
		shells   *wasmshell.Engine
		shellErr error
		shellDur time.Duration
		wg       sync.WaitGroup
	)
	if withShell {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.Now()
			shells, shellErr = compileShell(ctx, cache, memoryBytes, newZones(py.Lib).data, true)
			shellDur = time.Since(t)
			prog.done(moduleShell)
		}()
	}
	// A cached image is read while the module compiles (or loads): they
	// need nothing of each other until the image's probe session.
	imageDir := cacheDir
	if !imageCache {
		imageDir = ""
	}
	cached := make(chan cachedImage, 1)
	go func() {
		var c cachedImage
		if imageDir != "" {
			if c.key = imageKey(py, warm); c.key != "" {
				c.img, c.err = loadImage(imageDir, c.key)
			}
		}
		cached <- c
	}()
	t := time.Now()
	rt, compiled, cxx, err := newInterpreterRuntime(ctx, py, cache, memoryBytes)
	interpDur := time.Since(t)
	prog.done(moduleInterpreter)
	wg.Wait()
	prog.stop()
	if err != nil || shellErr != nil {
		if c := <-cached; c.img != nil {
			c.img.shared.close()
		}
		if shells != nil {
			_ = shells.Close(ctx)
		}
		if err != nil {
			return nil, err
		}
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("compile the shell: %w", shellErr)
	}
	// What the cache gained was compiled; the rest was loaded. (Another
	// process compiling into a shared cache at the same time can add to
	// the count, hence the cap.)
	fresh := len(modules)
	if cacheDir != "" {
		fresh = min(written(before, cacheEntries(cacheDir)), len(modules))
	}
	attrs := []any{"profile", py.Profile, "compiled", fresh, "loaded_from_cache", len(modules) - fresh,
		"cache_dir", cacheDir, "interpreter_seconds", interpDur.Seconds()}
	if withShell {
		attrs = append(attrs, "shell_seconds", shellDur.Seconds())
	}
	logger.Info("wasm modules ready", attrs...)
	e := &engine{runtime: rt, rt: py, compiled: compiled, cxx: cxx, cache: cache, memoryBytes: memoryBytes, shells: shells,
		root: guestroot.New(guestMounts()...)}
	c := <-cached
	if err := e.makeImage(ctx, imageDir, c, warm, figures, logger); err != nil {
		if shells != nil {
			_ = shells.Close(ctx)
		}
		_ = rt.Close(ctx)
		return nil, err
	}
	if imageDir != "" && c.key != "" {
		if n, err := pruneImages(imageDir, c.key, time.Now()); err != nil {
			logger.Debug("interpreter images not pruned", "dir", imageDir, "error", err)
		} else if n > 0 {
			logger.Info("interpreter images no process has started from for a while removed", "dir", imageDir, "removed", n)
		}
	}
	// Only where loads mark what they read (bufferCacheReads knows this
	// wazero): otherwise a module in use would look unused.
	if cacheDir != "" && bufferCacheReads(cache) {
		if n, err := pruneCompiled(cacheDir, time.Now()); err != nil {
			logger.Debug("compiled modules not pruned", "dir", cacheDir, "error", err)
		} else if n > 0 {
			logger.Info("compiled modules no process has loaded for a while removed", "dir", cacheDir, "removed", n)
		}
	}
	return e, nil
}

// cachedImage is what newEngine read of the image cache: the image's key
// ("" when none is kept), and the image or why there is none.
type cachedImage struct {
	key string
	img *image
	err error
}

// makeImage sets e.image: c's, read from cacheDir (none if "") for this
// runtime, driver and warm list, which a probe session then checks
// (learnHotPages), or one booted and cached. figures are the
// workspace's, for the probe session.
func (e *engine) makeImage(ctx context.Context, cacheDir string, c cachedImage, warm []string, figures string, logger *slog.Logger) error {
	t := time.Now()
	key := c.key
	if key != "" {
		img, err := c.img, c.err
		switch {
		case err == nil:
			e.image = img
			e.image.id = uuid.NewString()
			// The probe session is the image's check: a cached image that
			// cannot start a session is replaced (learnHotPages sets
			// nothing it keeps until it succeeds).
			err := e.learnHotPages(ctx, figures)
			if !errors.Is(err, errProbeSession) {
				e.imageCached = true
				if err := touchImage(cacheDir, key); err != nil {
					// Only pruneImages reads the time: at worst the image
					// is made anew once it thinks the image unused.
					logger.Debug("interpreter image not touched", "error", err)
				}
				if err != nil {
					logger.Warn("sessions copy the pages they write one by one", "error", err)
				}
				logger.Info("wasm interpreter image ready", "profile", e.rt.Profile, "from_cache", true, "load_seconds", time.Since(t).Seconds(),
					"memory_bytes", img.size, "nonzero_bytes", img.residentBytes(), "hot_bytes", img.shared.hotBytes())
				return nil
			}
			logger.Warn("the cached interpreter image failed its probe session; booting a new one", "error", err)
			e.image = nil
			img.shared.close()
		case !errors.Is(err, fs.ErrNotExist):
			logger.Warn("the cached interpreter image cannot be used; booting a new one", "error", err)
		}
	}
	t = time.Now()
	img, notShared, err := e.bootTemplate(ctx, warm)
	if err != nil {
		return err
	}
	e.image = img
	e.image.id = uuid.NewString()
	if notShared != nil {
		logger.Warn("interpreter image not shared; each session copies it", "error", notShared)
	}
	logger.Info("wasm interpreter image ready", "profile", e.rt.Profile, "boot_seconds", time.Since(t).Seconds(),
		"memory_bytes", img.size, "nonzero_bytes", img.residentBytes(), "shared", img.shared != nil)
	if err := e.learnHotPages(ctx, figures); err != nil {
		logger.Warn("sessions copy the pages they write one by one", "error", err)
	} else {
		logger.Info("wasm session pages learnt", "hot_bytes", img.shared.hotBytes())
	}
	if key != "" && img.shared != nil {
		if err := saveImage(cacheDir, key, img); err != nil {
			logger.Warn("could not cache the interpreter image", "dir", cacheDir, "error", err)
		}
	}
	return nil
}

func (e *engine) close(ctx context.Context) error {
	err := e.runtime.Close(ctx)
	e.shellsMu.Lock()
	defer e.shellsMu.Unlock()
	if e.shells != nil {
		err = errors.Join(err, e.shells.Close(ctx))
	}
	e.closeSpares()
	e.image.shared.close()
	return err
}

// Statuses of codeport_run, in the high 32 bits of its result; see
// entry.c and driver.py.
const (
	statusOK = iota
	statusException
	statusExit
	statusNoMemory
	// 4: the driver itself failed; anything unknown is taken as that.
)

// Request kinds; see driver.py.
const (
	requestCell     = 'C' // source run in the session's __main__
	requestDisplay  = 'D' // the same, displaying the last expression
	requestPython   = 'P' // a `python ...` command line from the bash tool
	requestWarm     = 'W' // modules to import before the image is taken
	requestSession  = 'S' // a session starts from the image
	requestSnapshot = 'Z' // the session is about to be saved
	requestRestored = 'R' // the session was restored from a snapshot
)

// bootTemplate starts CPython and the driver in an instance of its own,
// imports warm, and takes the image of its memory and globals.
func (e *engine) bootTemplate(ctx context.Context, warm []string) (img *image, notShared, err error) {
	m, cleanup, err := scratchMounts("codeport-template-")
	if err != nil {
		return nil, nil, err
	}
	defer cleanup()
	it, err := e.instantiate(ctx, m)
	if err != nil {
		return nil, nil, err
	}
	defer it.kill()
	// Start-up output is CPython's and the driver's own, never a user's:
	// safe to show in an error.
	it.stderr.begin(4096)
	fail := func(what string, err error) error {
		msg, _ := it.stderr.end()
		if err == nil {
			err = errors.New("failed")
		}
		return fmt.Errorf("%w: %s: %v: %s", port.ErrRuntimeFailure, what, err, strings.TrimSpace(msg))
	}
	ctx = it.callContext(ctx)
	for _, name := range []string{cpython.ExportInitData, cpython.ExportInitLibc} {
		if _, err := it.mod.ExportedFunction(name).Call(ctx); err != nil {
			return nil, nil, fail(name, err)
		}
	}
	if r, err := it.mod.ExportedFunction(cpython.ExportInit).Call(ctx); err != nil || int32(r[0]) != 0 {
		return nil, nil, fail("start CPython", err)
	}
	if err := it.write(ctx, driverSource); err != nil {
		return nil, nil, fail("load the driver", err)
	}
	if r, err := it.mod.ExportedFunction(cpython.ExportBoot).Call(ctx, uint64(len(driverSource))); err != nil || int32(r[0]) != 0 {
		return nil, nil, fail("start the driver", err)
	}
	msg, _ := it.stderr.end()
	if warm == nil {
		warm = []string{}
	}
	list, _ := json.Marshal(warm)
	r := it.run(ctx, requestWarm, string(list), time.Minute, 4096, 1<<62)
	if r.dead || r.outcome != port.OutcomeCompleted {
		return nil, nil, fmt.Errorf("%w: warming the template up: %s: %s %s", port.ErrRuntimeFailure, r.outcome, strings.TrimSpace(msg), strings.TrimSpace(r.stderr))
	}
	return takeImage(it.mod, e.rt.Module)
}

// scratchMounts are a /workspace and /tmp in a new temporary directory,
// for an instance that is no session's (the template, the probe of
// learnHotPages); cleanup removes them.
func scratchMounts(prefix string) (m mounts, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return mounts{}, nil, fmt.Errorf("%w: scratch directory: %v", port.ErrRuntimeFailure, err)
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	work, tmp := filepath.Join(dir, "workspace"), filepath.Join(dir, "tmp")
	for _, d := range []string{work, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			cleanup()
			return mounts{}, nil, fmt.Errorf("%w: scratch directory: %v", port.ErrRuntimeFailure, err)
		}
	}
	quota := workspace.NewQuota(1 << 20)
	return mounts{workspace.NewSysFS(work, quota), workspace.NewSysFS(tmp, quota)}, cleanup, nil
}

// hotProbe is the call learnHotPages runs in its probe session: the
// smallest cell, whose pages (the compiler's, the driver's, the output
// path's) every call writes.
const hotProbe = "x = 1 + 1\nprint(x)"

// learnHotPages starts a session from the image, as start does, runs
// hotProbe in it, and records the image's pages it wrote as the ones every
// later mapping copies at once (sharedImage.hot). A session writes these
// anyway; copying them up front replaces a copy-on-write fault per page,
// each flushing a shared mapping on every core, with one system call.
// What this cannot learn (no pagemap, no mapping) leaves sessions as
// they were: faulting page by page.
func (e *engine) learnHotPages(ctx context.Context, figures string) error {
	if e.image.shared == nil {
		return nil
	}
	m, cleanup, err := scratchMounts("codeport-probe-")
	if err != nil {
		return err
	}
	defer cleanup()
	it, err := e.fromImage(ctx, m)
	if err != nil {
		return fmt.Errorf("%w: %v", errProbeSession, err)
	}
	defer it.kill()
	if it.alloc == nil || !it.alloc.mapped {
		return errors.New("the probe's memory is not a mapping of the image")
	}
	for _, req := range []struct {
		kind    byte
		payload string
	}{{requestSession, figures}, {requestCell, hotProbe}} {
		if r := it.run(ctx, req.kind, req.payload, time.Minute, 4096, 1<<62); r.dead || r.outcome != port.OutcomeCompleted {
			return fmt.Errorf("%w: %s: %s", errProbeSession, r.outcome, strings.TrimSpace(r.stderr))
		}
	}
	written, err := it.alloc.writtenPages()
	if err != nil {
		return err
	}
	e.image.shared.setHot(written)
	// The probe, done with its call, is what a recycled instance must
	// match: no file open, and its descriptors' census.
	if n := it.openFiles.Load(); n != 0 {
		return fmt.Errorf("the probe session left %d files open; instances are not recycled", n)
	}
	census, err := newFdCensus(e)
	if err != nil {
		return fmt.Errorf("instances are not recycled: %w", err)
	}
	if e.freshCensus, err = census.take(ctx, it.mod); err != nil {
		return fmt.Errorf("instances are not recycled: %w", err)
	}
	e.census, e.spares = census, make(chan *interpreter, spareInstances)
	return nil
}

// errProbeSession is learnHotPages failing to start or run its session
// from the image (rather than failing to learn from it).
var errProbeSession = errors.New("the probe session failed")

// guestMounts are the guest paths instantiate mounts, in its order, and
// the root made around them ("/", mounted last): the image and session
// snapshots record the descriptors and paths of these preopened
// directories (buildID hashes them).
func guestMounts() []string {
	return []string{workspace.GuestRoot, "/tmp", cpython.StdlibDir, "/"}
}

// mounts are the file systems an instance sees as /workspace and /tmp.
type mounts struct {
	work, tmp experimentalsys.FS
}

// instantiate makes an instance of the module whose /workspace and /tmp
// are the given file systems, and whose standard library is the embedded
// zip. Nothing runs in it yet. Mounts are made in the same order for the
// template and every session, so the descriptors of the preopened
// directories, which the image records, are the same.
func (e *engine) instantiate(ctx context.Context, m mounts) (*interpreter, error) {
	it := &interpreter{interrupt: make(chan struct{})}
	it.slots = [4]*mountSlot{newMountSlot(m.work, &it.openFiles), newMountSlot(m.tmp, &it.openFiles),
		newMountSlot(&sysfs.AdaptFS{FS: e.rt.Lib}, &it.openFiles), newMountSlot(e.root, &it.openFiles)}
	fsCfg := wazero.NewFSConfig().(sysfs.FSConfig).
		WithSysFSMount(it.slots[0], workspace.GuestRoot).(sysfs.FSConfig).
		WithSysFSMount(it.slots[1], "/tmp").(sysfs.FSConfig).
		WithSysFSMount(it.slots[2], cpython.StdlibDir).(sysfs.FSConfig).
		WithSysFSMount(it.slots[3], "/")
	modCfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions(). // a reactor: the host calls its exports
		WithArgs("python3").
		WithEnv("HOME", workspace.GuestRoot).
		WithEnv("TMPDIR", "/tmp").
		WithEnv("LANG", "C.UTF-8").
		WithStdin(eofReader{}).
		WithStdout(&it.stdout).
		WithStderr(&it.stderr).
		WithFSConfig(fsCfg).
		WithRandSource(rand.Reader).
		WithSysWalltime().
		WithSysNanotime().
		WithNanosleep(it.sleep).
		WithOsyield(func() {})
	mod, err := e.runtime.InstantiateModule(ctx, e.compiled, modCfg)
	if err != nil {
		return nil, fmt.Errorf("%w: instantiate interpreter: %v", port.ErrRuntimeFailure, err)
	}
	it.mod = mod
	it.mounts = m
	it.runFn = mod.ExportedFunction(cpython.ExportRun)
	it.bufferFn = mod.ExportedFunction(cpython.ExportBuffer)
	stop, ok := mod.ExportedGlobal(cpython.ExportInterrupt).(api.MutableGlobal)
	if !ok || it.runFn == nil || it.bufferFn == nil {
		_ = mod.Close(ctx)
		return nil, fmt.Errorf("%w: the runtime module lacks codeport's exports", port.ErrRuntimeFailure)
	}
	it.stopFlag = stop
	if e.cxx != nil {
		if it.cxx, err = e.cxx.newState(mod); err != nil {
			_ = mod.Close(ctx)
			return nil, fmt.Errorf("%w: %v", port.ErrRuntimeFailure, err)
		}
	}
	return it, nil
}

// fromImage makes an instance over m restored from the image (mapped
// copy-on-write where the host allows it; a recycled one when one is
// kept): the template's interpreter, which a session then makes its own
// (start) or overwrites with a snapshot's memory (restoreInterpreter).
func (e *engine) fromImage(ctx context.Context, m mounts) (*interpreter, error) {
	if it := e.spare(m); it != nil {
		return it, nil
	}
	var alloc *allocation
	ictx := ctx
	if e.image.shared != nil {
		alloc = e.image.shared.allocation()
		ictx = experimental.WithMemoryAllocator(ctx, alloc)
	}
	it, err := e.instantiate(ictx, m)
	if err != nil {
		return nil, err
	}
	if err := e.image.restore(it.mod, alloc != nil && alloc.mapped); err != nil {
		it.kill()
		return nil, fmt.Errorf("%w: restore the interpreter image: %v", port.ErrRuntimeFailure, err)
	}
	it.alloc = alloc
	return it, nil
}

// start makes a session's interpreter: an instance restored from the
// image, given its own random state and the workspace's figures
// (workspaceFigures).
func (e *engine) start(ctx context.Context, m mounts, figures string) (*interpreter, error) {
	it, err := e.fromImage(ctx, m)
	if err != nil {
		return nil, err
	}
	r := it.run(ctx, requestSession, figures, time.Minute, 4096, 1<<62)
	if r.dead || r.outcome != port.OutcomeCompleted {
		it.kill()
		return nil, fmt.Errorf("%w: starting a session's interpreter: %s: %s", port.ErrRuntimeFailure, r.outcome, strings.TrimSpace(r.stderr))
	}
	return it, nil
}

// interpreter is one CPython instance. Between calls nothing runs in it: a
// request is one call of its codeport_run export, made by run on a
// goroutine run owns and awaits.
type interpreter struct {
	mod    api.Module
	mounts mounts // its /workspace and /tmp, for codeport_fs

	runFn    api.Function
	bufferFn api.Function
	// stopFlag is the module's interrupt global: once set, the running
	// call traps at its next loop header.
	stopFlag api.MutableGlobal
	stdout   streamCapture
	stderr   streamCapture
	// cxx is what its invoke_ calls keep between them (nil: the module
	// has no C++ exceptions).
	cxx *cxxState

	// interrupt is closed when the instance is being stopped: host calls
	// that block (sleeps) return at once. stopped says it was.
	interrupt chan struct{}
	stopped   atomic.Bool
	stopOnce  sync.Once
	closeOnce sync.Once

	// What recycling needs (recycle.go): the memory's allocation (nil
	// where the image is not shared), the /workspace and /tmp mounts, and
	// the files open through any mount.
	alloc     *allocation
	slots     [4]*mountSlot // in guestMounts' order
	openFiles atomic.Int64
}

// callContext is ctx for a call of the instance's exports: its host
// functions find there the instance's mounts and C++ exception state.
func (it *interpreter) callContext(ctx context.Context) context.Context {
	return withCxxState(withMounts(ctx, it.mounts), it.cxx)
}

// write copies a request into the instance's buffer, where codeport_boot
// and codeport_run read it.
func (it *interpreter) write(ctx context.Context, payload string) error {
	r, err := it.bufferFn.Call(ctx, uint64(len(payload)))
	if err != nil {
		return err
	}
	ptr := uint32(r[0])
	if ptr == 0 {
		return errNoMemory
	}
	if !it.mod.Memory().WriteString(ptr, payload) {
		return errors.New("request buffer out of range")
	}
	return nil
}

// errNoMemory is a request the interpreter had no memory to receive.
var errNoMemory = errors.New("no memory for the request")

// sleep implements WASI's clock sleeps (time.sleep, select timeouts) so that
// a stop interrupts them: a program asleep in a host call would otherwise
// outlive its deadline.
func (it *interpreter) sleep(ns int64) {
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-it.interrupt:
	}
}

// halt makes a running call stop: it traps at its next loop header, and a
// host sleep returns. The instance is unusable afterwards.
func (it *interpreter) halt() {
	it.stopOnce.Do(func() {
		it.stopped.Store(true)
		it.stopFlag.Set(1)
		close(it.interrupt)
	})
}

// kill releases the instance. No call may be running (run awaits its own).
// Safe to call more than once.
func (it *interpreter) kill() {
	it.halt()
	it.closeOnce.Do(func() { _ = it.mod.Close(context.Background()) })
}

// memoryBytes is the instance's linear memory size now.
func (it *interpreter) memoryBytes() int64 {
	if m := it.mod.Memory(); m != nil {
		return int64(m.Size())
	}
	return 0
}

// hostRefusedMemory reports, and clears, whether the memory has not grown
// since it was last asked because the process hosting it was near its
// data limit (dataRoom), rather than at the session's own limit.
func (it *interpreter) hostRefusedMemory() bool {
	return it.alloc != nil && it.alloc.hostRefused.Swap(false)
}

// eofReader is stdin: input() sees end of file at once.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

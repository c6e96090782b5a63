package wasm

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

//go:embed driver.py
var driverSource string

// driverBootstrap runs driver.py (passed as the next argument) under the
// file name "<codeport>", which its tracebacks filter on, and takes it out
// of sys.argv.
const driverBootstrap = "import sys; exec(compile(sys.argv.pop(1), '<codeport>', 'exec'))"

// ErrRuntimeAsset is returned by New when the runtime asset is missing or is
// not the pinned build.
var ErrRuntimeAsset = errors.New("wasm runtime asset")

// engine is the compiled interpreter, shared by every session of an
// adapter: compiled once per process (or loaded from wazero's on-disk cache)
// and instantiated afresh for each interpreter.
type engine struct {
	runtime  wazero.Runtime
	compiled wazero.CompiledModule
}

// verifyAsset reads the runtime asset and checks it against the pinned
// hash, so a corrupt or substituted file is a start-up error rather than a
// sandbox running unknown code.
func verifyAsset(dir string) ([]byte, error) {
	path := filepath.Join(dir, RuntimeAssetName)
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s not found (run `make runtime`, or point CODEPORT_RUNTIME_DIR / --runtime-dir at a directory holding it)", ErrRuntimeAsset, path)
		}
		return nil, fmt.Errorf("%w: %v", ErrRuntimeAsset, err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != RuntimeAssetSHA256 {
		return nil, fmt.Errorf("%w: %s has sha256 %s, want %s (delete it and run `make runtime`)", ErrRuntimeAsset, path, got, RuntimeAssetSHA256)
	}
	return b, nil
}

func newEngine(ctx context.Context, wasmBytes []byte, cacheDir string, memoryBytes int64, logger *slog.Logger) (*engine, error) {
	cache, err := wazero.NewCompilationCacheWithDir(cacheDir)
	if err != nil {
		// A read-only runtime directory costs start-up time, not service.
		logger.Warn("compilation cache unavailable; compiling in memory", "dir", cacheDir, "error", err)
		cache = wazero.NewCompilationCache()
	}
	cfg := wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		// A trap with debug info spends ~1.7 s building a DWARF stack
		// trace for this 26 MB module; we never show it to anyone.
		WithDebugInfoEnabled(false).
		// Makes running code stop when its instance context is cancelled:
		// how timeouts and cancellations interrupt a program.
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(uint32(memoryBytes / wasmPage))
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("instantiate WASI: %w", err)
	}
	compiled, err := rt.CompileModule(ctx, wasmBytes)
	if err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("compile runtime: %w", err)
	}
	return &engine{runtime: rt, compiled: compiled}, nil
}

func (e *engine) close(ctx context.Context) error { return e.runtime.Close(ctx) }

// interpreter is one running CPython instance: a goroutine blocked in
// _start, driving cells it receives over the control channel.
type interpreter struct {
	mod    api.Module
	ctl    *controlFile
	stdout streamCapture
	stderr streamCapture

	// stop cancels the instance context (wazero then closes the module
	// wherever it is running) and interrupt wakes host calls that block.
	stop      context.CancelFunc
	interrupt chan struct{}
	killOnce  sync.Once
	// exited is closed when _start has returned; exitErr is its error,
	// readable after exited is closed.
	exited  chan struct{}
	exitErr error
}

// start boots a fresh interpreter whose /workspace and /tmp are the given
// host directories, charged to quota, and waits until the driver is ready.
func (e *engine) start(ctx context.Context, workDir, tmpDir string, quota *workspace.Quota) (*interpreter, error) {
	it := &interpreter{interrupt: make(chan struct{}), exited: make(chan struct{})}
	ctlFS := newControlFS(it.interrupt)
	it.ctl = ctlFS.file

	fsCfg := wazero.NewFSConfig().(sysfs.FSConfig).
		WithSysFSMount(workspace.NewSysFS(workDir, quota), workspace.GuestRoot).(sysfs.FSConfig).
		WithSysFSMount(workspace.NewSysFS(tmpDir, quota), "/tmp").(sysfs.FSConfig).
		WithSysFSMount(ctlFS, controlMount)
	modCfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions(). // _start is called below, on the instance's own goroutine
		WithArgs("python", "-u", "-I", "-c", driverBootstrap, driverSource).
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
	instCtx, cancel := context.WithCancel(context.Background())
	it.stop = cancel
	// Capture the driver's boot output so a start-up failure can be told.
	it.stderr.begin(4096)
	go func() {
		defer close(it.exited)
		_, it.exitErr = mod.ExportedFunction("_start").Call(instCtx)
	}()
	select {
	case <-it.ctl.ready:
		it.stderr.end()
		return it, nil
	case <-it.exited:
		msg, _ := it.stderr.end()
		it.kill()
		// Start-up output is the driver's own, never a user's: safe to show.
		return nil, fmt.Errorf("%w: interpreter exited during start-up: %v: %s", port.ErrRuntimeFailure, it.exitErr, lastLine(msg))
	case <-ctx.Done():
		it.kill()
		return nil, fmt.Errorf("%w: interpreter start-up abandoned: %w", port.ErrRuntimeFailure, ctx.Err())
	}
}

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

// kill stops the instance wherever it is and waits for its goroutine to
// end, then releases its memory. Safe to call more than once.
func (it *interpreter) kill() {
	it.killOnce.Do(func() {
		close(it.interrupt)
		it.stop()
	})
	<-it.exited
	_ = it.mod.Close(context.Background())
}

// memoryBytes is the instance's linear memory size now.
func (it *interpreter) memoryBytes() int64 {
	if m := it.mod.Memory(); m != nil {
		return int64(m.Size())
	}
	return 0
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// eofReader is stdin: input() sees end of file at once.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

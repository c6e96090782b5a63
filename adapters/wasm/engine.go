package wasm

import (
	"bytes"
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
	"github.com/tetratelabs/wazero/sys"

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
	// bootArgs start the driver: from its code object, marshalled once per
	// driver and runtime and cached on disk, or else from its source.
	bootArgs []string
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
	e := &engine{runtime: rt, compiled: compiled}
	e.bootArgs = []string{"python", "-u", "-I", "-c", driverBootstrap, driverSource}
	if code, err := e.driverCode(ctx, cacheDir); err != nil {
		logger.Warn("driver not precompiled; every interpreter compiles it at boot", "error", err)
	} else {
		e.bootArgs = []string{"python", "-u", "-I", "-c", driverCodeBootstrap, code}
	}
	return e, nil
}

// driverCodeBootstrap runs the driver from its marshalled code object,
// given as hex (WASI arguments are C strings: no NUL bytes) in the next
// argument. Compiling driver.py costs about 55 ms in WebAssembly, a sixth
// of an interpreter's boot; loading its code object costs about 1 ms.
const driverCodeBootstrap = "import sys; exec(__import__('marshal').loads(bytes.fromhex(sys.argv.pop(1))))"

// driverCode is the driver compiled to a marshalled code object, as hex:
// read from cacheDir, or made by one interpreter run and stored there.
// marshal's format is the interpreter's own, so the key is the runtime's
// hash with the driver's.
func (e *engine) driverCode(ctx context.Context, cacheDir string) (string, error) {
	key := sha256.Sum256([]byte(RuntimeAssetSHA256 + "\x00" + driverSource))
	path := filepath.Join(cacheDir, "codeport-driver-"+hex.EncodeToString(key[:8])+".hex")
	if b, err := os.ReadFile(path); err == nil {
		if code, ok := checkedCode(b); ok {
			return code, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var out, errOut limitedBuffer
	out.limit, errOut.limit = 1<<20, 4096
	mod, err := e.runtime.InstantiateModule(ctx, e.compiled, wazero.NewModuleConfig().WithName("").
		WithArgs("python", "-I", "-c", "import sys, marshal; sys.stdout.write(marshal.dumps(compile(sys.argv[1], '<codeport>', 'exec')).hex())", driverSource).
		WithStdout(&out).WithStderr(&errOut))
	if mod != nil {
		_ = mod.Close(ctx)
	}
	var exit *sys.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 0) {
		return "", fmt.Errorf("compile the driver: %v: %s", err, lastLine(errOut.String()))
	}
	if !validHex(out.Bytes()) || out.full {
		return "", fmt.Errorf("compile the driver: unexpected output (%d bytes)", out.Len())
	}
	// Atomically, so that concurrent processes never read half a file.
	tmp, err := os.CreateTemp(cacheDir, "codeport-driver-*.tmp")
	if err == nil {
		sum := sha256.Sum256(out.Bytes())
		_, werr := tmp.WriteString(hex.EncodeToString(sum[:]) + " " + out.String())
		cerr := tmp.Close()
		if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
			_ = os.Remove(tmp.Name())
		}
	}
	return out.String(), nil
}

// checkedCode reads a cache file, "<sha256 of code> <code>", and returns
// the code if the file is whole.
func checkedCode(b []byte) (string, bool) {
	sumHex, code, ok := strings.Cut(string(b), " ")
	if !ok || !validHex([]byte(code)) {
		return "", false
	}
	sum := sha256.Sum256([]byte(code))
	return code, hex.EncodeToString(sum[:]) == sumHex
}

func validHex(b []byte) bool {
	if len(b) == 0 || len(b)%2 != 0 {
		return false
	}
	_, err := hex.Decode(make([]byte, len(b)/2), b)
	return err == nil
}

// limitedBuffer keeps at most limit bytes and notes whether more came.
type limitedBuffer struct {
	bytes.Buffer
	limit int
	full  bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := l.limit - l.Len(); n > room {
		l.full = true
		p = p[:max(room, 0)]
	}
	l.Buffer.Write(p)
	return n, nil
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
		WithArgs(e.bootArgs...).
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

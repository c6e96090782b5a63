package wasmshell

import (
	"bytes"
	"context"
	"crypto/rand"
	_ "embed"
	"errors"
	"fmt"
	"io"
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

	"github.com/codeport/codeport/adapters/wasm/internal/shell/wasmshell/protocol"
	"github.com/codeport/codeport/adapters/wasm/internal/wasmpatch"
)

//go:embed runtime/shell.wasm
var shellWasm []byte

// ModuleSize is the size of the embedded shell module in bytes: what a
// first start compiles, for an estimate of how long that takes.
func ModuleSize() int { return len(shellWasm) }

// wasmPage is the size of a page of linear memory.
const wasmPage = 64 << 10

// Config configures an Engine.
type Config struct {
	// MemoryBytes caps each shell's linear memory: the guest's heap,
	// stacks and buffers. Required.
	MemoryBytes int64
	// Cache, when set, is where compiled code is kept and found (share the
	// adapter's, whose directory makes a restart compile nothing).
	Cache wazero.CompilationCache
	// Grace is how long a shell may take to stop once its call's context
	// is done before it is ended by force (its state lost); 0 means 2s.
	Grace time.Duration
	// Module replaces the embedded shell.wasm (for tests of a fresh
	// build of the guest).
	Module []byte
	// Zone, when set, returns the TZif data (RFC 8536) of an IANA time
	// zone ("Europe/Paris"), for date and the other commands that honour
	// TZ; the guest embeds no time zone database. Give the data Python's
	// zoneinfo reads, so that both agree.
	Zone func(name string) ([]byte, bool)
	// Image, when set, is called once with the memory every shell starts
	// with (that of an instance whose _initialize has run; it is not kept
	// after the call) and returns the Image that each shell's memory maps
	// (see Image). Without it, or when it fails, the engine keeps that
	// memory and each shell's start copies it.
	Image func(memory []byte) (Image, error)
}

// Engine is the compiled shell, shared by every session of an adapter.
type Engine struct {
	cfg      Config
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	// data are the guest's data segments, which the compiled module no
	// longer carries (wasmpatch.SplitData): the template's start writes
	// them. They are slices of the module's bytes. dataEnd is where the
	// last ends. globals name the module's mutable globals, which
	// SplitData exported.
	data    []wasmpatch.Segment
	dataEnd uint64
	globals []string

	// tmpl is what every shell starts from, made by the first Start.
	tmplOnce sync.Once
	tmpl     *template
	tmplErr  error
}

// NewEngine compiles the shell (or finds it in cfg.Cache).
func NewEngine(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.MemoryBytes < 16<<20 {
		return nil, fmt.Errorf("wasmshell: a shell needs at least 16 MiB of memory, not %d bytes", cfg.MemoryBytes)
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 2 * time.Second
	}
	// No WithCloseOnContextDone: the guest is stopped by force through
	// wasmpatch's interrupt (instance.kill), as the interpreter is. wazero
	// watched the context of every call of a module closed on it with a
	// goroutine of its own, which was 12% of an `echo hi` once each call
	// was a call of the guest.
	rcfg := wazero.NewRuntimeConfig().
		WithDebugInfoEnabled(false).
		WithMemoryLimitPages(uint32(cfg.MemoryBytes / wasmPage))
	if cfg.Cache != nil {
		rcfg = rcfg.WithCompilationCache(cfg.Cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rcfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("wasmshell: instantiate WASI: %w", err)
	}
	if err := instantiateHost(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, err
	}
	mod := cfg.Module
	if mod == nil {
		mod = shellWasm
	}

	// The Go toolchain writes the guest's data as 100,000 segments, for
	// which wazero keeps 2.4 MB of slice headers in every instance; and
	// instantiation would write them into each shell's memory. The
	// module compiled has none: the template's start puts the data in
	// (loadData), and shells start as the template.
	code, data, err := wasmpatch.SplitData(mod)
	if err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("wasmshell: the shell's data: %w", err)
	}
	// The patch adds the interrupt that stops a guest by force (checked
	// at every loop, even one that never calls the host), and exports the
	// mutable globals that an image of an instance is made of.
	code, _, err = wasmpatch.Patch(code)
	if err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("wasmshell: patch the shell: %w", err)
	}
	globals, err := wasmpatch.SnapshotGlobals(code)
	if err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("wasmshell: the shell's globals: %w", err)
	}
	compiled, err := rt.CompileModule(experimental.WithCompilationWorkers(ctx, runtime.GOMAXPROCS(0)), code)
	if err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("wasmshell: compile the shell: %w", err)
	}
	return &Engine{cfg: cfg, rt: rt, compiled: compiled, data: data, dataEnd: dataEnd(data), globals: globals}, nil
}

// Close releases the compiled shell and its image; every Shell must be
// closed first.
func (e *Engine) Close(ctx context.Context) error {
	if e.tmpl != nil && e.tmpl.image != nil {
		e.tmpl.image.Close()
	}
	return e.rt.Close(ctx)
}

// PythonCall is a python command line the shell runs: argv as typed
// (argv[0] is python or python3), the whole of its standard input, the
// shell's directory (a guest path) and its exported variables.
type PythonCall = protocol.PythonRequest

// PythonResult is how it ended. A non-empty Error means it could not run.
type PythonResult = protocol.PythonResult

// Options configures one session's shell.
type Options struct {
	// Workspace and Tmp are the guest's /workspace and /tmp: the same
	// file systems as the session's Python. Required.
	Workspace, Tmp experimentalsys.FS
	// MaxFileBytes caps a file a command writes and the input a command
	// holds in memory; <= 0 means none beyond the quota.
	MaxFileBytes int64
	// Quota, when set, reports the session's byte quota (0: none) and its
	// use, which df shows.
	Quota func() (limit, used int64)
	// Python runs python command lines, each as a program of its own;
	// ctx ends with the bash call's. Nil makes python fail.
	Python func(ctx context.Context, call PythonCall) PythonResult
}

// Shell is one session's shell: a guest instance serving the session's
// bash calls one at a time. Its directory, variables, functions and
// options persist between calls as in one bash process, until the guest
// ends (Result.Restarted).
type Shell struct {
	eng  *Engine
	opts Options

	mu   sync.Mutex // held by Run and Close
	inst *instance  // nil until the first Run and after a loss
	gone bool       // Close was called
}

// Start returns a session's shell. The guest instance starts with the
// first call.
func (e *Engine) Start(opts Options) (*Shell, error) {
	if opts.Workspace == nil || opts.Tmp == nil {
		return nil, errors.New("wasmshell: a shell needs its workspace and temporary directory")
	}
	e.tmplOnce.Do(func() {
		if e.tmpl, e.tmplErr = e.makeTemplate(); e.tmplErr == nil {
			e.learnHot()
		}
	})
	if e.tmplErr != nil {
		return nil, e.tmplErr
	}
	return &Shell{eng: e, opts: opts}, nil
}

// Stop says why a call ended early.
type Stop = protocol.Stop

const (
	StopNone      = protocol.StopNone
	StopDeadline  = protocol.StopDeadline  // its context's deadline passed
	StopCancelled = protocol.StopCancelled // its context was cancelled
)

// Result is how a call ended.
type Result struct {
	// Code is the script's exit status (124 after a deadline, 130 after a
	// cancellation, as bash's timeout and ^C give).
	Code int
	Stop Stop
	// Lost reports that the guest ended during the call (out of memory, a
	// crash, or forced to stop): the shell's state is gone, and the next
	// call starts a fresh shell. OutOfMemory tells the first cause.
	Lost        bool
	OutOfMemory bool
	// TooDeep reports a guest that ended because the script nested too
	// deep (unbounded recursion) for its call stack.
	TooDeep bool
}

// ErrClosed is a Run after Close.
var ErrClosed = errors.New("wasmshell: shell closed")

// Run runs command, writing its output to stdout and stderr as it is
// produced. When ctx ends, the shell is told to stop and given the
// engine's grace period; after that the guest is ended by force. Run
// returns only once nothing of the call runs any more.
func (s *Shell) Run(ctx context.Context, command string, stdout, stderr io.Writer) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return Result{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		// Nothing runs for a call already over.
		res := Result{Stop: StopCancelled, Code: 130}
		if errors.Is(err, context.DeadlineExceeded) {
			res.Stop, res.Code = StopDeadline, 124
		}
		return res, nil
	}
	if s.inst == nil {
		inst, err := s.start()
		if err != nil {
			return Result{}, err
		}
		s.inst = inst
	}
	inst := s.inst
	req := protocol.EncodeRequest(command)
	inst.begin(ctx, stdout, stderr)
	defer inst.end()

	var res Result
	select {
	case inst.requests <- req:
	case <-inst.exited:
		return s.lost(res), nil
	}
	select {
	case code := <-inst.replies:
		res.Code = int(code)
		return res, nil
	case <-inst.exited:
		return s.lost(res), nil
	case <-ctx.Done():
	}
	res.Stop = StopCancelled
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		res.Stop = StopDeadline
	}
	inst.stop.Store(uint32(res.Stop))
	grace := time.NewTimer(s.eng.cfg.Grace)
	defer grace.Stop()
	select {
	case <-inst.replies:
	case <-inst.exited:
		res = s.lost(res)
	case <-grace.C:
		inst.kill()
		<-inst.exited
		res = s.lost(res)
	}
	// The status is the stop's, whatever the guest saw first.
	res.Code = 124
	if res.Stop == StopCancelled {
		res.Code = 130
	}
	return res, nil
}

// lost records the end of the guest during a call.
func (s *Shell) lost(res Result) Result {
	res.Lost = true
	res.OutOfMemory = s.inst.outOfMemory()
	if err := s.inst.exitErr; err != nil && !res.OutOfMemory {
		// wazero's trap of a guest whose native call stack overflowed.
		msg, _, _ := strings.Cut(err.Error(), "\n")
		res.TooDeep = strings.Contains(msg, "stack overflow")
	}
	if res.Code == 0 {
		res.Code = 1
	}
	s.inst = nil
	return res
}

// Close ends the guest, if any, and waits for it. Safe to call more than
// once; it waits for a call in progress.
func (s *Shell) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gone = true
	if s.inst != nil {
		s.inst.shutdown()
		s.inst = nil
	}
}

// MemoryBytes is the guest's linear memory now (0 before the first call).
func (s *Shell) MemoryBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inst == nil {
		return 0
	}
	return s.inst.memoryBytes()
}

// start launches a guest instance from the engine's template, on a
// goroutine the instance owns, which serves its calls until shutdown and
// ends with it.
func (s *Shell) start() (*instance, error) {
	inst := &instance{
		requests:  make(chan []byte),
		replies:   make(chan int32, 1),
		exited:    make(chan struct{}),
		closing:   make(chan struct{}),
		interrupt: make(chan struct{}),
		ready:     make(chan struct{}),
		python:    s.opts.Python,
		workspace: s.opts.Workspace,
		quotaFn:   s.opts.Quota,
		zone:      s.eng.cfg.Zone,
		tmp:       s.opts.Tmp,
	}
	tmpl := s.eng.tmpl
	ictx := context.WithValue(context.Background(), instanceKey{}, inst)
	var mapped func() bool
	if tmpl.image != nil {
		inst.alloc, mapped = tmpl.image.Allocation()
		ictx = experimental.WithMemoryAllocator(ictx, inst.alloc)
	}
	ctx, cancel := context.WithCancel(ictx)
	inst.cancel = cancel
	cfg := moduleConfig(s.opts.Workspace, s.opts.Tmp, &inst.stdout, &inst.stderr, inst.sleep)
	python := uint64(0)
	if s.opts.Python != nil {
		python = 1
	}
	go func() {
		defer close(inst.exited)
		defer cancel()
		mod, err := s.eng.rt.InstantiateModule(ctx, s.eng.compiled, cfg)
		if err == nil {
			inst.setModule(mod)
			err = tmpl.restore(mod, mapped)
		}
		if err == nil {
			_, err = mod.ExportedFunction("setup").Call(ctx, api.EncodeI64(s.opts.MaxFileBytes), python)
		}
		if err == nil {
			close(inst.ready)
			err = inst.serve(ctx, mod)
		}
		if mod != nil {
			_ = mod.Close(context.Background())
		}
		inst.exitErr = err
	}()
	select {
	case <-inst.ready:
		return inst, nil
	case <-inst.exited:
		return nil, fmt.Errorf("wasmshell: the shell did not start: %w", inst.exitErr)
	}
}

// moduleConfig is the configuration of a guest instance over the mounts
// ws and tmp. The template's and every shell's must be the same but for
// the mounts' file systems, the standard streams and the sleep: the Go
// runtime reads the rest (arguments, environment, the mounts' names and
// numbers) in _initialize, which only the template runs.
func moduleConfig(ws, tmp experimentalsys.FS, stdout, stderr io.Writer, sleep func(ns int64)) wazero.ModuleConfig {
	fsCfg := wazero.NewFSConfig().(sysfs.FSConfig).
		WithSysFSMount(ws, "/workspace").(sysfs.FSConfig).
		WithSysFSMount(tmp, "/tmp")
	return wazero.NewModuleConfig().
		WithName("").
		WithArgs("shell").
		// The Go runtime's own settings; the script's environment is
		// the shell's, never this one.
		WithEnv("GOTRACEBACK", "none").
		WithStdin(bytes.NewReader(nil)).
		WithStdout(stdout).
		WithStderr(stderr).
		WithFSConfig(fsCfg).
		WithRandSource(rand.Reader).
		WithSysWalltime().
		WithSysNanotime().
		WithNanosleep(sleep).
		WithOsyield(func() {}).
		// Nothing runs at instantiation: the template runs _initialize
		// once its data is in, a shell starts as the template.
		WithStartFunctions()
}

// serve runs the guest's calls, one per request, until shutdown (nil) or
// until the guest ends (its error).
func (inst *instance) serve(ctx context.Context, mod api.Module) error {
	run := mod.ExportedFunction("run")
	if run == nil {
		return errors.New("the shell exports no run")
	}
	stack := make([]uint64, 1)
	for {
		select {
		case req := <-inst.requests:
			inst.pending = req
			stack[0] = uint64(len(req))
			if err := run.CallWithStack(ctx, stack); err != nil {
				return fmt.Errorf("run: %w", err)
			}
			inst.replies <- api.DecodeI32(stack[0])
		case <-inst.closing:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// instance is one running guest.
type instance struct {
	requests chan []byte // the next request, for serve
	replies  chan int32  // a request's status, from serve
	exited   chan struct{}
	exitErr  error // set before exited is closed
	closing  chan struct{}
	closeOne sync.Once
	cancel   context.CancelFunc // ends the guest by force
	ready    chan struct{}      // closed once the guest is set up

	interrupt chan struct{} // closed when the guest is being ended: sleeps return
	killOnce  sync.Once
	stop      atomic.Uint32 // the Stop of the call in progress
	mod       atomic.Pointer[api.Module]

	alloc experimental.MemoryAllocator // its memory's, from the image; nil without one

	workspace, tmp experimentalsys.FS // the mounts, for chmod
	quotaFn        func() (limit, used int64)
	zone           func(name string) ([]byte, bool)

	pending []byte // the request of the call in progress or what python announced, for take

	python  func(context.Context, PythonCall) PythonResult
	callMu  sync.Mutex
	callCtx context.Context // the call in progress's, for python
	stdout  switchWriter
	stderr  switchWriter
}

type instanceKey struct{}

func (inst *instance) begin(ctx context.Context, stdout, stderr io.Writer) {
	inst.stop.Store(uint32(StopNone))
	inst.stderr.sawOOM.Store(false)
	inst.callMu.Lock()
	inst.callCtx = ctx
	inst.callMu.Unlock()
	inst.stdout.set(stdout)
	inst.stderr.set(stderr)
}

func (inst *instance) end() {
	inst.stdout.set(nil)
	inst.stderr.set(nil)
	inst.callMu.Lock()
	inst.callCtx = nil
	inst.callMu.Unlock()
}

// kill ends the guest by force: its code traps at its next loop (the
// patch's interrupt), and its host calls return.
func (inst *instance) kill() {
	inst.killOnce.Do(func() {
		close(inst.interrupt)
		inst.cancel()
		if m := inst.mod.Load(); m != nil {
			interrupt(*m)
		}
	})
}

// setModule records the instance's module, and interrupts it at once if
// kill came first.
func (inst *instance) setModule(mod api.Module) {
	inst.mod.Store(&mod)
	select {
	case <-inst.interrupt:
		interrupt(mod)
	default:
	}
}

// interrupt sets the patch's interrupt global: the guest traps at its
// next loop, wherever it is.
func interrupt(mod api.Module) {
	if g, ok := mod.ExportedGlobal(wasmpatch.InterruptGlobal).(api.MutableGlobal); ok {
		g.Set(1)
	}
}

// shutdown asks the guest to end between calls and waits for it, ending
// it by force if it does not within a second.
func (inst *instance) shutdown() {
	inst.closeOne.Do(func() { close(inst.closing) })
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-inst.exited:
	case <-t.C:
		inst.kill()
		<-inst.exited
	}
}

func (inst *instance) sleep(ns int64) {
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-inst.interrupt:
	}
}

func (inst *instance) memoryBytes() int64 {
	if m := inst.mod.Load(); m != nil {
		if mem := (*m).Memory(); mem != nil {
			return int64(mem.Size())
		}
	}
	return 0
}

// outOfMemory reports whether the guest ended for want of memory: the Go
// runtime in it says so ("fatal error: out of memory", or a stack that
// could not grow) when its linear memory cannot grow.
func (inst *instance) outOfMemory() bool { return inst.stderr.sawOOM.Load() }

// switchWriter is the guest's stdout or stderr: the current call's writer,
// or nothing between calls. It keeps the last bytes written, where the Go
// runtime's last words are when the guest dies.
type switchWriter struct {
	mu     sync.Mutex
	w      io.Writer
	last   []byte
	sawOOM atomic.Bool
}

// The Go runtime's last words when the guest's memory cannot grow.
var oomMarkers = [][]byte{
	[]byte("fatal error: out of memory"),
	[]byte("fatal error: stack overflow"),
	// What Go on wasm says when memory.grow fails while it maps a new
	// heap arena.
	[]byte("fatal error: arena already initialized"),
	// What it says when the growth fails for the runtime's own
	// structures (persistentalloc) rather than the heap: the memory bomb
	// tests saw it one run in ten.
	[]byte("fatal error: runtime: cannot allocate memory"),
}

const tailBytes = 64

func (s *switchWriter) set(w io.Writer) {
	s.mu.Lock()
	s.w = w
	s.mu.Unlock()
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The markers are looked for across writes: the last bytes of the
	// previous one, then this one.
	window := append(s.last, p...)
	for _, m := range oomMarkers {
		if bytes.Contains(window, m) {
			s.sawOOM.Store(true)
		}
	}
	s.last = append(s.last[:0], window[max(0, len(window)-tailBytes):]...)
	if s.w == nil {
		return len(p), nil
	}
	if _, err := s.w.Write(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// TrimCrashReport cuts, from the standard error of a call whose guest
// died, the Go runtime's dump of its goroutines after its "fatal error"
// line: the dump describes the shell's internals, not the script, and the
// Go runtime prints it for every fatal error whatever GOTRACEBACK says.
func TrimCrashReport(stderr string) string {
	i := strings.LastIndex(stderr, "fatal error: ")
	if i < 0 {
		return stderr
	}
	rest := stderr[i:]
	for _, dump := range []string{"\n\ngoroutine ", "\n\nruntime stack:"} {
		if j := strings.Index(rest, dump); j >= 0 {
			return stderr[:i+j+1]
		}
	}
	return stderr
}

func (inst *instance) quota() (limit, used int64) {
	if inst.quotaFn == nil {
		return 0, 0
	}
	return inst.quotaFn()
}

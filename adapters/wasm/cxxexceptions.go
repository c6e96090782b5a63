package wasm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/codeport/codeport/adapters/wasm/internal/wasmpatch"
)

// C++ exceptions and C's setjmp/longjmp, for a runtime whose C++ is
// compiled with LLVM's Emscripten-style lowering (-mllvm
// -enable-emscripten-cxx-exceptions, -enable-emscripten-sjlj). The guest
// calls every function that may throw (or longjmp) through an imported
// env.invoke_<sig>(fp, args...), which the host implements: it calls
// function fp of the guest's table 0 with args, through the dispatcher
// wasmpatch exports for that import (InvokeExportPrefix), and when a throw
// happens inside returns zero instead. The guest sets its __THREW__
// variable in its own memory before throwing and reads it after invoke_
// returns: the host never writes it. To throw, the guest calls
// codeport_cxx.throw, which never returns: the host abandons every wasm
// frame up to the nearest invoke_ on the stack, which then returns
// normally, with the guest's stack pointer (clang's __stack_pointer,
// global 0) as it was when that invoke_ started. A throw with no invoke_
// on the stack ends the outermost call with an error wrapping
// errUncaughtCxx, a crash of that call (see run).
//
// How the host unwinds: throw panics with errUncaughtCxx, and wazero
// recovers a host function's panic at the innermost Call on the stack,
// which is the nearest invoke_'s call of the dispatcher; that Call returns
// an error wrapping the panic value. invoke_ recovers nothing else: any
// other error of the call (a trap such as the interrupt's "unreachable", a
// sys.ExitError from proc_exit) is panicked again, so that the outer Call
// returns it in turn, up to the outermost, whose caller classifies it as
// it would without invoke_ in between (an exit error comes back unwrapped,
// a trap's first line is unchanged).
const (
	cxxModule    = "codeport_cxx"
	cxxThrowName = "throw"
	// cxxStackPointer is the export of clang's __stack_pointer, global 0,
	// which wasmpatch exports as it does every mutable global.
	cxxStackPointer = wasmpatch.GlobalExportPrefix + "0"
)

// errUncaughtCxx is the value codeport_cxx.throw panics with. The nearest
// invoke_ on the stack recovers it; one that no invoke_ recovers ends the
// outermost call with an error wrapping it: the guest threw with nothing
// to catch its exception, and the instance is discarded like after any
// trap.
var errUncaughtCxx = errors.New("uncaught C++ exception")

// cxxHost is the host side of a module's env.invoke_* imports: one
// function per import, and what the instance-free checks found.
type cxxHost struct {
	invokes []*invokeFunc // in import order; their sig is their index
	throw   bool          // the module imports codeport_cxx.throw
}

// newCxxHost reads the env and codeport_cxx imports of a compiled runtime
// (module is its bytes) and refuses what the host cannot provide: an env
// import other than invoke_*, an invoke_ without its dispatcher or of a
// type other than (i32, numbers...) -> (at most one number), a
// codeport_cxx import other than throw () -> (), and invoke_ imports in a
// module that does not export its stack pointer. It returns nil for a
// module that imports from neither (the default runtime).
func newCxxHost(compiled wazero.CompiledModule, module []byte) (*cxxHost, error) {
	h := &cxxHost{}
	exports := compiled.ExportedFunctions()
	for _, def := range compiled.ImportedFunctions() {
		modName, name, _ := def.Import()
		switch modName {
		case wasmpatch.InvokeImportModule:
			if !strings.HasPrefix(name, wasmpatch.InvokeImportPrefix) {
				return nil, fmt.Errorf("the runtime imports %s.%s: the host provides only %s.%s* (C++ exceptions)",
					modName, name, modName, wasmpatch.InvokeImportPrefix)
			}
			export := wasmpatch.InvokeExportPrefix + strings.TrimPrefix(name, wasmpatch.InvokeImportPrefix)
			params, results := def.ParamTypes(), def.ResultTypes()
			if len(params) == 0 || params[0] != api.ValueTypeI32 || len(results) > 1 ||
				!numeric(params) || !numeric(results) {
				return nil, fmt.Errorf("the runtime imports %s.%s of type %s: want (i32, numbers...) -> (at most one number)",
					modName, name, signature(params, results))
			}
			d := exports[export]
			if d == nil || !slices.Equal(d.ParamTypes(), params) || !slices.Equal(d.ResultTypes(), results) {
				return nil, fmt.Errorf("the runtime imports %s.%s but exports no dispatcher %s of its type (was it patched by this wasmpatch?)",
					modName, name, export)
			}
			h.invokes = append(h.invokes, &invokeFunc{
				sig: len(h.invokes), name: name, export: export, params: params, results: results,
				narrow: narrowSlots(params), narrowResult: len(narrowSlots(results)) > 0,
			})
		case cxxModule:
			if name != cxxThrowName || len(def.ParamTypes()) != 0 || len(def.ResultTypes()) != 0 {
				return nil, fmt.Errorf("the runtime imports %s.%s of type %s: the host provides only %s.%s of type () -> ()",
					modName, name, signature(def.ParamTypes(), def.ResultTypes()), cxxModule, cxxThrowName)
			}
			h.throw = true
		}
	}
	if len(h.invokes) == 0 && !h.throw {
		return nil, nil
	}
	if len(h.invokes) > 0 {
		globals, err := wasmpatch.SnapshotGlobals(module)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(globals, cxxStackPointer) {
			return nil, fmt.Errorf("the runtime imports %s.%s* but does not export its stack pointer (global 0) as %s",
				wasmpatch.InvokeImportModule, wasmpatch.InvokeImportPrefix, cxxStackPointer)
		}
	}
	return h, nil
}

// narrowSlots are the indexes of the 32-bit values among types.
func narrowSlots(types []api.ValueType) []int {
	var idx []int
	for i, t := range types {
		if t == api.ValueTypeI32 || t == api.ValueTypeF32 {
			idx = append(idx, i)
		}
	}
	return idx
}

func numeric(types []api.ValueType) bool {
	for _, t := range types {
		switch t {
		case api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeF32, api.ValueTypeF64:
		default:
			return false
		}
	}
	return true
}

func signature(params, results []api.ValueType) string {
	names := func(types []api.ValueType) string {
		s := make([]string, len(types))
		for i, t := range types {
			s[i] = api.ValueTypeName(t)
		}
		return "(" + strings.Join(s, ", ") + ")"
	}
	return names(params) + " -> " + names(results)
}

// instantiate adds the host modules the runtime imports from to rt: env
// with its invoke_ functions, codeport_cxx with throw.
func (h *cxxHost) instantiate(ctx context.Context, rt wazero.Runtime) error {
	if len(h.invokes) > 0 {
		b := rt.NewHostModuleBuilder(wasmpatch.InvokeImportModule)
		for _, f := range h.invokes {
			b.NewFunctionBuilder().WithGoModuleFunction(f, f.params, f.results).Export(f.name)
		}
		if _, err := b.Instantiate(ctx); err != nil {
			return fmt.Errorf("instantiate %s: %w", wasmpatch.InvokeImportModule, err)
		}
	}
	if h.throw {
		b := rt.NewHostModuleBuilder(cxxModule)
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(cxxThrow), nil, nil).Export(cxxThrowName)
		if _, err := b.Instantiate(ctx); err != nil {
			return fmt.Errorf("instantiate %s: %w", cxxModule, err)
		}
	}
	return nil
}

// cxxThrow is codeport_cxx.throw: see errUncaughtCxx.
func cxxThrow(context.Context, api.Module, []uint64) {
	panic(errUncaughtCxx)
}

// cxxState is what one instance's invoke_ calls keep between them: the
// dispatchers they call, and its stack pointer global.
//
// A wazero api.Function cannot be called while a call of it is on the
// stack (its call engine, which owns the call's native stack, is not
// reentrant), and invoke_ nests: a function it calls may call invoke_
// again, of the same signature. So each signature has a stack of
// functions, one per nesting depth, made by ExportedFunction the first
// time that depth is reached and reused after (making one allocates its
// ~10 KiB stack; reusing one after a throw is fine, wazero resets a call
// engine after a panic).
//
// Where the state lives: it is made with the instance (engine.instantiate)
// and kept by its interpreter, and invoke_ finds it in the call's context
// (interpreter.callContext), as codeport_fs finds the instance's mounts.
// Nothing registers it anywhere, so nothing has to unregister it: it is
// garbage with the interpreter, and the host keeps no mutable state of its
// own. The alternative, a map from api.Module to state shared by every
// instance of the runtime, written at each instantiation and removed by a
// close notifier (experimental.WithCloseNotifier), would cost a little
// more per invoke_ (BenchmarkCxxStateLookup, 2 cores: 5 ns for the
// context value, 8 for a sync.Map, of about 60 for the whole invoke_),
// share one structure between every session's goroutines, and leak an
// entry whenever a close path missed the notifier. A call whose context
// lacks the state (or carries another instance's) still works, slowly:
// its invoke_ makes a state of its own, and a fresh function (about
// 3.5 µs and 12 KB).
//
// Only the goroutine running a call of the instance touches the state:
// an instance runs one call at a time.
type cxxState struct {
	mod  api.Module
	sp   api.MutableGlobal
	sigs []invokeStack // by invokeFunc.sig
}

// invokeStack is one signature's dispatchers, by depth, and the depth of
// the innermost invoke_ of that signature now running.
type invokeStack struct {
	depth int
	fns   []api.Function
}

// idle says no invoke_ is under way (a nil state has none).
func (st *cxxState) idle() bool {
	if st == nil {
		return true
	}
	for _, s := range st.sigs {
		if s.depth != 0 {
			return false
		}
	}
	return true
}

type cxxStateKey struct{}

// newState makes the invoke_ state of a new instance of the module.
func (h *cxxHost) newState(mod api.Module) (*cxxState, error) {
	if len(h.invokes) == 0 {
		return nil, nil
	}
	sp, ok := mod.ExportedGlobal(cxxStackPointer).(api.MutableGlobal)
	if !ok {
		return nil, fmt.Errorf("the runtime does not export %s as a mutable global", cxxStackPointer)
	}
	return &cxxState{mod: mod, sp: sp, sigs: make([]invokeStack, len(h.invokes))}, nil
}

// withCxxState gives the invoke_ calls made during ctx the state st (nil:
// none).
func withCxxState(ctx context.Context, st *cxxState) context.Context {
	if st == nil {
		return ctx
	}
	return context.WithValue(ctx, cxxStateKey{}, st)
}

// invokeFunc is one env.invoke_<sig>, of type (i32 fp, T1..Tn) -> R, the
// type of its dispatcher too: the call's stack is passed to the
// dispatcher as it is, and the dispatcher's results come back in it.
type invokeFunc struct {
	sig     int    // index into cxxState.sigs
	name    string // the import, e.g. "invoke_vii"
	export  string // its dispatcher, e.g. "codeport_invoke.vii"
	params  []api.ValueType
	results []api.ValueType
	// narrow are the params that are 32 bits wide, and narrowResult says
	// whether the result is. The call's stack holds each value in a 64-bit
	// slot; a 32-bit value may leave stale bits in the upper half (the
	// dispatcher writes its 32-bit result into the low half only, over
	// the slot of the fp parameter). invoke_ clears the upper halves of
	// what it passes on, both ways. Without it the real runtime's matplotlib
	// crashed the process (SIGSEGV in compiled code storing through an
	// address with a 64-bit garbage index); TestCxxInvokeZeroExtends holds
	// the slots clean, and TestCxxInvokeDirtyUpperHalves runs dirty ones
	// end to end.
	narrow       []int
	narrowResult bool
}

// Call implements api.GoModuleFunction.
func (f *invokeFunc) Call(ctx context.Context, mod api.Module, stack []uint64) {
	st, _ := ctx.Value(cxxStateKey{}).(*cxxState)
	if st == nil || st.mod != mod {
		// A state for this invoke_ alone: slow (a new function each time),
		// but right.
		sp, ok := mod.ExportedGlobal(cxxStackPointer).(api.MutableGlobal)
		if !ok {
			panic(fmt.Errorf("%s.%s: the module does not export %s", wasmpatch.InvokeImportModule, f.name, cxxStackPointer))
		}
		st = &cxxState{mod: mod, sp: sp, sigs: make([]invokeStack, f.sig+1)}
	}
	s := &st.sigs[f.sig]
	d := s.depth
	if d == len(s.fns) {
		s.fns = append(s.fns, mod.ExportedFunction(f.export)) // newCxxHost checked it exists
	}
	sp := st.sp.Get()
	f.zeroExtend(stack)
	s.depth = d + 1
	err := s.fns[d].CallWithStack(ctx, stack)
	s.depth = d
	if err != nil {
		f.unwound(err, st.sp, sp, stack)
		return
	}
	f.zeroExtendResult(stack)
}

// zeroExtend clears the upper half of the 32-bit params in stack (see
// invokeFunc.narrow).
func (f *invokeFunc) zeroExtend(stack []uint64) {
	for _, i := range f.narrow {
		stack[i] = uint64(uint32(stack[i]))
	}
}

// zeroExtendResult does the same for a 32-bit result.
func (f *invokeFunc) zeroExtendResult(stack []uint64) {
	if f.narrowResult {
		stack[0] = uint64(uint32(stack[0]))
	}
}

// unwound handles the error of the dispatcher's call: a throw is caught,
// with the stack pointer restored to sp and a zero result; anything else
// goes on up the stack, unchanged.
func (f *invokeFunc) unwound(err error, g api.MutableGlobal, sp uint64, stack []uint64) {
	if !errors.Is(err, errUncaughtCxx) {
		panic(err)
	}
	g.Set(sp)
	if len(f.results) > 0 {
		stack[0] = 0
	}
}

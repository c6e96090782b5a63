package wasm

// The host side of Emscripten-style C++ exceptions (cxxexceptions.go),
// tested on a hand-written module: the CI has no clang, and wazero reads
// no text format. The module is patched by wasmpatch and run by the same
// runtime, host modules and instance setup as CPython.

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
	"github.com/codeport/codeport/adapters/wasm/internal/guestroot"
	"github.com/codeport/codeport/adapters/wasm/internal/wasmpatch"
	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

// Where the test module keeps what the tests read.
const (
	cxxThrew     = 0  // __THREW__'s stand-in: set before a throw, read after invoke_
	cxxOK        = 16 // ok_vi's argument
	cxxArg       = 20 // throw_vi's argument
	cxxAfter     = 24 // written after throw returns: must stay 0
	cxxSum       = 28 // sum_vii's result
	cxxDone      = 32 // invoke_at's caller went on after invoke_
	cxxDirty     = 36 // the word the dirty_* exports' addresses point at
	cxxCopy      = 40 // copy_vii's destination in stale_slot_at
	cxxSeen      = 64 // + 4n: __THREW__ as nest_vi(n) saw it after its invoke_
	cxxCont      = 128
	cxxStackTop  = 65536 // the stack pointer's initial value
	cxxMemLimit  = 16 << 20
	cxxBufferPtr = 1024
	// cxxDirtyHigh is the upper half the dirty_* exports give their
	// 32-bit values' registers and slots.
	cxxDirtyHigh = 0x12345678_00000000
)

// Indices of the test module's table.
const (
	fpOK = iota
	fpThrow
	fpOKII
	fpThrowII
	fpNest
	fpMoveSP
	fpSpin
	fpExit
	fpSum
	fpGrow
	fpLoad
	fpWrap
	fpCopy
	fpCount
)

// cxxTestModule is a module as LLVM's lowering would make it, before
// wasmpatch: it imports env.invoke_vi, invoke_ii and invoke_vii,
// codeport_cxx.throw, proc_exit and fd_seek, has clang's stack pointer as
// global 0 and a table of the functions named by the fp constants:
//
//	ok_vi(x):       [cxxOK] = x
//	throw_vi(x):    __THREW__ = 1; [cxxArg] = x; throw(); [cxxAfter] = 99
//	ok_ii(x):       x + 1
//	throw_ii(x):    __THREW__ = 1; throw(); 5
//	nest_vi(n):     n == 0: __THREW__ = 1; throw()
//	                else: __THREW__ = 0; invoke_vi(nest_vi, n-1);
//	                [cxxSeen+4n] = __THREW__; __THREW__ = 0; [cxxCont+4n] = 1
//	move_sp_vi(x):  sp -= 4096; [sp] = x; __THREW__ = 1; throw()
//	spin_vi(x):     loop forever
//	exit_vi(x):     proc_exit(x)
//	sum_vii(a, b):  [cxxSum] = a + b
//	grow_vi(x):     memory.grow(x); unreachable
//	load_ii(p):     [p]
//	wrap_ii(x):     i32.wrap_i64(cxxDirtyHigh | x)
//	copy_vii(p, q): [q] = [p]
//
// and exports, besides memory:
//
//	invoke_at(fp, x) i32:      __THREW__ = 0; invoke_vi(fp, x); [cxxDone] = 1; return __THREW__
//	invoke_ii_at(fp, x) i32:   invoke_ii(fp, x)
//	invoke_vii_at(fp, a, b):   invoke_vii(fp, a, b)
//	throw_now():               throw(), with no invoke_
//	get_sp() i32
//	loop_invoke(fp, n):        invoke_vi(fp, i) for i < n
//	loop_call(fp, n):          fp(i) for i < n, by call_indirect
//	codeport_buffer(n) i32:    cxxBufferPtr
//	codeport_run(kind, n) i64: the buffer's first byte selects fp, 255 for
//	                           throw(); its second is the argument;
//	                           invoke_vi(fp, arg); return 0 (completed)
//	dirty_arg_at(fp) i32:      invoke_ii(fp, i32.wrap_i64(cxxDirtyHigh | cxxDirty))
//	dirty_result_at(fp, x) i32: [invoke_ii(fp, x)]
//	stale_slot_at(fp, p, q):   fd_seek(-1, cxxDirtyHigh, 0, 0);
//	                           invoke_vii(fp, p, q)
func cxxTestModule() []byte {
	u32 := func(v uint64) []byte { return binary.AppendUvarint(nil, v) } // unsigned LEB128
	s32 := func(v int64) []byte {                                        // signed LEB128 (binary's Varint is zigzag)
		var b []byte
		for {
			c := byte(v & 0x7f)
			v >>= 7
			if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
				return append(b, c)
			}
			b = append(b, c|0x80)
		}
	}
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	vec := func(items ...[]byte) []byte { return cat(u32(uint64(len(items))), cat(items...)) }
	name := func(s string) []byte { return cat(u32(uint64(len(s))), []byte(s)) }
	section := func(id byte, items ...[]byte) []byte {
		payload := vec(items...)
		return cat([]byte{id}, u32(uint64(len(payload))), payload)
	}
	const i32, i64 = 0x7f, 0x7e
	fnType := func(params, results []byte) []byte {
		return cat([]byte{0x60}, u32(uint64(len(params))), params, u32(uint64(len(results))), results)
	}
	body := func(locals []byte, code ...[]byte) []byte {
		b := cat(locals, cat(code...), []byte{0x0b})
		return cat(u32(uint64(len(b))), b)
	}
	noLocals := []byte{0x00}
	oneLocal := []byte{0x01, 0x01, i32}
	c := func(v int32) []byte { return cat([]byte{0x41}, s32(int64(v))) }
	get := func(i uint32) []byte { return cat([]byte{0x20}, u32(uint64(i))) }
	set := func(i uint32) []byte { return cat([]byte{0x21}, u32(uint64(i))) }
	call := func(f uint32) []byte { return cat([]byte{0x10}, u32(uint64(f))) }
	store := func(addr []byte, v ...[]byte) []byte { return cat(addr, cat(v...), []byte{0x36, 0x02, 0x00}) }
	load := func(addr int32) []byte { return cat(c(addr), []byte{0x28, 0x02, 0x00}) }
	loadAt := []byte{0x28, 0x02, 0x00} // i32.load of the address on the stack
	dirty := func(low []byte) []byte { // i32.wrap_i64(cxxDirtyHigh | low)
		return cat([]byte{0x42}, s32(cxxDirtyHigh), low, []byte{0xad, 0x84, 0xa7}) // i64.extend_i32_u; i64.or; i32.wrap_i64
	}
	var (
		add, sub, eqz      = []byte{0x6a}, []byte{0x6b}, []byte{0x45}
		ifThen, end        = []byte{0x04, 0x40}, []byte{0x0b}
		ret, drop, unreach = []byte{0x0f}, []byte{0x1a}, []byte{0x00}
		spGet, spSet       = []byte{0x23, 0x00}, []byte{0x24, 0x00}
	)
	// Types.
	const (
		tV, tI, tII, tIIV, tIII, tIIIV, tVI, tIIJ, tSeek = 0, 1, 2, 3, 4, 5, 6, 7, 8
	)
	types := section(1,
		fnType(nil, nil),                 // tV
		fnType([]byte{i32}, nil),         // tI: vi's call, proc_exit
		fnType([]byte{i32}, []byte{i32}), // tII: ii's call, codeport_buffer
		fnType([]byte{i32, i32}, nil),    // tIIV: invoke_vi, vii's call
		fnType([]byte{i32, i32}, []byte{i32}),
		fnType([]byte{i32, i32, i32}, nil),
		fnType(nil, []byte{i32}),
		fnType([]byte{i32, i32}, []byte{i64}),
		fnType([]byte{i32, i64, i32, i32}, []byte{i32}), // tSeek: fd_seek
	)
	// Imported functions.
	const (
		invokeVI, invokeII, invokeVII, throw, procExit, fdSeek = 0, 1, 2, 3, 4, 5
	)
	imp := func(mod, field string, typ uint32) []byte {
		return cat(name(mod), name(field), []byte{0x00}, u32(uint64(typ)))
	}
	imports := section(2,
		imp("env", "invoke_vi", tIIV),
		imp("env", "invoke_ii", tIII),
		imp("env", "invoke_vii", tIIIV),
		imp("codeport_cxx", "throw", tV),
		imp("wasi_snapshot_preview1", "proc_exit", tI),
		imp("wasi_snapshot_preview1", "fd_seek", tSeek))
	// Defined functions, from 6: the table's, then the exports.
	const first = 6
	threw := func(v int32) []byte { return store(c(cxxThrew), c(v)) }
	invokeVIOf := func(fp, arg []byte) []byte { return cat(fp, arg, call(invokeVI)) }
	tableFuncs := [][2][]byte{ // type, body
		{{tI}, body(noLocals, store(c(cxxOK), get(0)))},
		{{tI}, body(noLocals, threw(1), store(c(cxxArg), get(0)), call(throw), store(c(cxxAfter), c(99)))},
		{{tII}, body(noLocals, get(0), c(1), add)},
		{{tII}, body(noLocals, threw(1), call(throw), c(5))},
		{{tI}, body(noLocals,
			get(0), eqz, ifThen, threw(1), call(throw), ret, end,
			threw(0),
			invokeVIOf(c(fpNest), cat(get(0), c(1), sub)),
			store(cat(get(0), c(4), []byte{0x6c}, c(cxxSeen), add), load(cxxThrew)), // i32.mul
			threw(0),
			store(cat(get(0), c(4), []byte{0x6c}, c(cxxCont), add), c(1)))},
		{{tI}, body(noLocals, spGet, c(4096), sub, spSet, store(spGet, get(0)), threw(1), call(throw))},
		{{tI}, body(noLocals, []byte{0x03, 0x40}, []byte{0x0c, 0x00}, end)},
		{{tI}, body(noLocals, get(0), call(procExit))},
		{{tIIV}, body(noLocals, store(c(cxxSum), get(0), get(1), add))},
		{{tI}, body(noLocals, get(0), []byte{0x40, 0x00}, drop, unreach)},
		{{tII}, body(noLocals, get(0), loadAt)},
		{{tII}, body(noLocals, dirty(get(0)))},
		{{tIIV}, body(noLocals, store(get(1), get(0), loadAt))},
	}
	countedLoop := func(each []byte) []byte {
		// for i := 0; i < n (local 1); i++ { each } with i in local 2
		return cat(
			[]byte{0x02, 0x40},                               // block
			[]byte{0x03, 0x40},                               // loop
			get(2), get(1), []byte{0x4f}, []byte{0x0d, 0x01}, // i32.ge_u; br_if 1
			each,
			get(2), c(1), add, set(2),
			[]byte{0x0c, 0x00}, end, end)
	}
	exportFuncs := []struct {
		name string
		typ  uint32
		body []byte
	}{
		{"invoke_at", tIII, body(noLocals,
			threw(0), invokeVIOf(get(0), get(1)), store(c(cxxDone), c(1)),
			load(cxxThrew), threw(0))},
		{"invoke_ii_at", tIII, body(noLocals, get(0), get(1), call(invokeII))},
		{"invoke_vii_at", tIIIV, body(noLocals, get(0), get(1), get(2), call(invokeVII))},
		{"throw_now", tV, body(noLocals, call(throw))},
		{"get_sp", tVI, body(noLocals, spGet)},
		{"loop_invoke", tIIV, body(oneLocal, countedLoop(invokeVIOf(get(0), get(2))))},
		{"loop_call", tIIV, body(oneLocal, countedLoop(cat(get(2), get(0), []byte{0x11}, u32(tI), []byte{0x00})))},
		{"codeport_buffer", tII, body(noLocals, c(cxxBufferPtr))},
		{"codeport_run", tIIJ, body(noLocals,
			c(cxxBufferPtr), []byte{0x2d, 0x00, 0x00}, c(255), []byte{0x46}, // i32.load8_u; i32.eq
			ifThen, call(throw), end,
			invokeVIOf(cat(c(cxxBufferPtr), []byte{0x2d, 0x00, 0x00}), cat(c(cxxBufferPtr+1), []byte{0x2d, 0x00, 0x00})),
			[]byte{0x42, 0x00})}, // i64.const 0: completed
		{"dirty_arg_at", tII, body(noLocals, get(0), dirty(c(cxxDirty)), call(invokeII))},
		{"dirty_result_at", tIII, body(noLocals, get(0), get(1), call(invokeII), loadAt)},
		{"stale_slot_at", tIIIV, body(noLocals,
			// fd_seek's offset, an i64, fills the 64-bit slot in which
			// invoke_vii then gets p (the same slot of a Go call's
			// stack of the same size, 4 slots, at the same depth).
			c(-1), []byte{0x42}, s32(cxxDirtyHigh), c(0), c(0), call(fdSeek), drop,
			get(0), get(1), get(2), call(invokeVII))},
	}
	var funcs, code, exports, elems [][]byte
	for i, f := range tableFuncs {
		funcs = append(funcs, f[0])
		code = append(code, f[1])
		elems = append(elems, u32(uint64(first+i)))
	}
	exports = append(exports, cat(name("memory"), []byte{0x02, 0x00}))
	for i, f := range exportFuncs {
		funcs = append(funcs, u32(uint64(f.typ)))
		code = append(code, f.body)
		exports = append(exports, cat(name(f.name), []byte{0x00}, u32(uint64(first+len(tableFuncs)+i))))
	}
	return cat([]byte("\x00asm\x01\x00\x00\x00"),
		types,
		imports,
		section(3, funcs...),
		section(4, []byte{0x70, 0x00, byte(fpCount)}),           // table: funcref, min fpCount
		section(5, []byte{0x00, 0x02}),                          // memory: 2 pages
		section(6, cat([]byte{i32, 0x01}, c(cxxStackTop), end)), // __stack_pointer
		section(7, exports...),                                  //
		section(9, cat([]byte{0x00}, c(0), end, vec(elems...))), // the table's entries from 0
		section(10, code...))
}

// cxxTestEngine is an engine of the test module, made as newEngine makes
// CPython's, without the image.
func cxxTestEngine(t testing.TB) *engine {
	t.Helper()
	patched, stats, err := wasmpatch.Patch(cxxTestModule())
	if err != nil {
		t.Fatal(err)
	}
	if stats.Invokes != 3 {
		t.Fatalf("wasmpatch made %d dispatchers, want 3", stats.Invokes)
	}
	ctx := context.Background()
	py := cpython.Runtime{Profile: "cxx-test", Module: patched, Lib: fstest.MapFS{}}
	rt, compiled, cxx, err := newInterpreterRuntime(ctx, py, wazero.NewCompilationCache(), cxxMemLimit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(ctx) })
	if cxx == nil || len(cxx.invokes) != 3 || !cxx.throw {
		t.Fatalf("C++ exception host %+v; want three invoke_ and throw", cxx)
	}
	return &engine{runtime: rt, rt: py, compiled: compiled, cxx: cxx, memoryBytes: cxxMemLimit,
		root: guestroot.New(guestMounts()...)}
}

func cxxTestInstance(t testing.TB, e *engine) *interpreter {
	t.Helper()
	q := workspace.NewQuota(1 << 20)
	it, err := e.instantiate(context.Background(), mounts{workspace.NewSysFS(t.TempDir(), q), workspace.NewSysFS(t.TempDir(), q)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(it.kill)
	if it.cxx == nil || it.cxx.mod != it.mod {
		t.Fatal("the instance has no C++ exception state of its own")
	}
	if _, err := it.mod.ExportedFunction(wasmpatch.InitDataFunc).Call(context.Background()); err != nil {
		t.Fatal(err)
	}
	return it
}

// cxxCall calls an export of the instance as the adapter does, with the
// instance's call context.
func cxxCall(it *interpreter, name string, params ...uint64) ([]uint64, error) {
	return it.mod.ExportedFunction(name).Call(it.callContext(context.Background()), params...)
}

func mustCxxCall(t *testing.T, it *interpreter, name string, params ...uint64) []uint64 {
	t.Helper()
	res, err := cxxCall(it, name, params...)
	if err != nil {
		t.Fatalf("%s%v: %v", name, params, err)
	}
	return res
}

func cxxMem(t *testing.T, it *interpreter, addr uint32) uint32 {
	t.Helper()
	v, ok := it.mod.Memory().ReadUint32Le(addr)
	if !ok {
		t.Fatalf("read %d: out of range", addr)
	}
	return v
}

// A function that returns normally returns through invoke_, with its
// result and its arguments, whatever the signature.
func TestCxxInvokeReturnsNormally(t *testing.T) {
	it := cxxTestInstance(t, cxxTestEngine(t))
	if threw := mustCxxCall(t, it, "invoke_at", fpOK, 5)[0]; threw != 0 {
		t.Errorf("__THREW__ = %d after a normal return", threw)
	}
	if v := cxxMem(t, it, cxxOK); v != 5 {
		t.Errorf("ok_vi stored %d, want 5", v)
	}
	if v := cxxMem(t, it, cxxDone); v != 1 {
		t.Error("invoke_at did not go on after invoke_")
	}
	if r := mustCxxCall(t, it, "invoke_ii_at", fpOKII, 41)[0]; r != 42 {
		t.Errorf("invoke_ii(ok_ii, 41) = %d, want 42", r)
	}
	mustCxxCall(t, it, "invoke_vii_at", fpSum, 2, 3)
	if v := cxxMem(t, it, cxxSum); v != 5 {
		t.Errorf("sum_vii stored %d, want 5", v)
	}
}

// A throw ends the function it is in, and invoke_ returns normally, with a
// zero result; the caller reads __THREW__. The instance goes on working,
// at the same depth (whose wazero function a panic went through) too.
func TestCxxThrowIsCaughtByTheInvoke(t *testing.T) {
	it := cxxTestInstance(t, cxxTestEngine(t))
	for i := range 3 {
		if threw := mustCxxCall(t, it, "invoke_at", fpThrow, uint64(7+i))[0]; threw != 1 {
			t.Errorf("__THREW__ = %d after a throw", threw)
		}
		if v := cxxMem(t, it, cxxArg); v != uint32(7+i) {
			t.Errorf("throw_vi stored %d, want %d", v, 7+i)
		}
		if v := cxxMem(t, it, cxxAfter); v != 0 {
			t.Errorf("code after throw() ran: stored %d", v)
		}
		if v := cxxMem(t, it, cxxDone); v != 1 {
			t.Error("invoke_at did not go on after the caught throw")
		}
		if r := mustCxxCall(t, it, "invoke_ii_at", fpThrowII, 1)[0]; r != 0 {
			t.Errorf("invoke_ii(throw_ii) = %d, want 0", r)
		}
		if r := mustCxxCall(t, it, "invoke_ii_at", fpOKII, 1)[0]; r != 2 {
			t.Errorf("invoke_ii(ok_ii, 1) = %d after a throw, want 2", r)
		}
	}
	if s := it.cxx.sigs; s[0].depth != 0 || s[1].depth != 0 || len(s[0].fns) != 1 || len(s[1].fns) != 1 {
		t.Errorf("invoke_ state after the calls: %+v; want depth 0, one function each", s)
	}
}

// Nested invoke_: a throw lands at the nearest one (here depth 3), whose
// caller sees __THREW__ set and goes on; the ones further out return
// normally and see it clear.
func TestCxxNestedInvokes(t *testing.T) {
	it := cxxTestInstance(t, cxxTestEngine(t))
	// invoke_at → invoke_vi(nest_vi, 2) → nest_vi(2) → invoke_vi(nest_vi,
	// 1) → nest_vi(1) → invoke_vi(nest_vi, 0), depth 3 → nest_vi(0) throws.
	if threw := mustCxxCall(t, it, "invoke_at", fpNest, 2)[0]; threw != 0 {
		t.Errorf("the outermost invoke_ saw __THREW__ = %d, want 0", threw)
	}
	for n, want := range map[uint32]uint32{1: 1, 2: 0} {
		if v := cxxMem(t, it, cxxSeen+4*n); v != want {
			t.Errorf("nest_vi(%d) saw __THREW__ = %d, want %d", n, v, want)
		}
		if v := cxxMem(t, it, cxxCont+4*n); v != 1 {
			t.Errorf("nest_vi(%d) did not go on after its invoke_", n)
		}
	}
	if s := it.cxx.sigs[0]; s.depth != 0 || len(s.fns) != 3 {
		t.Errorf("invoke_vi: depth %d, %d functions; want 0 and 3", s.depth, len(s.fns))
	}
	// Deeper, reusing the three and adding two.
	mustCxxCall(t, it, "invoke_at", fpNest, 4)
	if v := cxxMem(t, it, cxxSeen+4); v != 1 {
		t.Errorf("nest_vi(1) saw __THREW__ = %d, want 1", v)
	}
	if s := it.cxx.sigs[0]; s.depth != 0 || len(s.fns) != 5 {
		t.Errorf("invoke_vi: depth %d, %d functions; want 0 and 5", s.depth, len(s.fns))
	}
}

// The stack pointer is back where it was when the invoke_ started, as the
// unwound frames would have left it.
func TestCxxThrowRestoresTheStackPointer(t *testing.T) {
	it := cxxTestInstance(t, cxxTestEngine(t))
	if sp := mustCxxCall(t, it, "get_sp")[0]; sp != cxxStackTop {
		t.Fatalf("stack pointer %d at the start, want %d", sp, cxxStackTop)
	}
	if threw := mustCxxCall(t, it, "invoke_at", fpMoveSP, 9)[0]; threw != 1 {
		t.Errorf("__THREW__ = %d after a throw", threw)
	}
	if v := cxxMem(t, it, cxxStackTop-4096); v != 9 {
		t.Errorf("move_sp_vi stored %d below the stack pointer, want 9", v)
	}
	if sp := mustCxxCall(t, it, "get_sp")[0]; sp != cxxStackTop {
		t.Errorf("stack pointer %d after the throw, want %d", sp, cxxStackTop)
	}
}

// Without invoke_ on the stack, a throw ends the call with the typed
// error, and the adapter says so.
func TestCxxUncaughtThrow(t *testing.T) {
	e := cxxTestEngine(t)
	it := cxxTestInstance(t, e)
	_, err := cxxCall(it, "throw_now")
	if !errors.Is(err, errUncaughtCxx) {
		t.Fatalf("throw_now: %v; want errUncaughtCxx", err)
	}
	it = cxxTestInstance(t, e)
	r := it.run(context.Background(), requestCell, "\xff\x00", time.Minute, 4096, cxxMemLimit)
	if !r.dead || r.outcome != port.OutcomeProgramError || r.returnCode != 1 ||
		!strings.Contains(r.stderr, "an uncaught C++ exception ended the call") {
		t.Errorf("uncaught throw in a request: %+v", r)
	}
}

// A caught throw inside a request is none of the adapter's business: the
// request completes and the interpreter is kept.
func TestCxxCaughtThrowInARequest(t *testing.T) {
	it := cxxTestInstance(t, cxxTestEngine(t))
	for _, payload := range []string{"\x01\x07", "\x04\x03", "\x00\x01"} {
		r := it.run(context.Background(), requestCell, payload, time.Minute, 4096, cxxMemLimit)
		if r.dead || r.outcome != port.OutcomeCompleted || r.stderr != "" {
			t.Errorf("request %q: %+v", payload, r)
		}
	}
}

// The interrupt's trap inside invoke_ is not a throw: it ends the whole
// call, whose caller sees the trap it would see without invoke_, and the
// request times out.
func TestCxxInterruptIsNotCaught(t *testing.T) {
	e := cxxTestEngine(t)
	it := cxxTestInstance(t, e)
	done := make(chan error, 1)
	go func() {
		_, err := cxxCall(it, "invoke_at", fpSpin, 0)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	it.halt()
	select {
	case err := <-done:
		if err == nil || !strings.HasPrefix(err.Error(), "wasm error: unreachable") || errors.Is(err, errUncaughtCxx) {
			t.Errorf("interrupted invoke_: %v; want the unreachable trap", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the interrupt did not stop the call")
	}
	if v := cxxMem(t, it, cxxDone); v != 0 {
		t.Error("invoke_at went on after the interrupt")
	}

	it = cxxTestInstance(t, e)
	r := it.run(context.Background(), requestCell, string([]byte{fpSpin, 0}), 100*time.Millisecond, 4096, cxxMemLimit)
	if !r.dead || r.outcome != port.OutcomeTimedOut {
		t.Errorf("a request spinning inside invoke_: %+v; want timed out", r)
	}
}

// proc_exit inside invoke_ ends the call with the exit error itself, not
// wrapped, as without invoke_.
func TestCxxExitInsideInvoke(t *testing.T) {
	e := cxxTestEngine(t)
	it := cxxTestInstance(t, e)
	_, err := cxxCall(it, "invoke_at", fpExit, 3)
	if exit, ok := err.(*sys.ExitError); !ok || exit.ExitCode() != 3 {
		t.Errorf("proc_exit(3) inside invoke_: %v (%T); want *sys.ExitError 3", err, err)
	}

	it = cxxTestInstance(t, e)
	r := it.run(context.Background(), requestCell, string([]byte{fpExit, 4}), time.Minute, 4096, cxxMemLimit)
	if !r.dead || r.outcome != port.OutcomeProgramError || r.returnCode != 4 || !strings.Contains(r.stderr, "exited with status 4") {
		t.Errorf("proc_exit(4) inside invoke_ in a request: %+v", r)
	}
}

// A crash at the memory limit inside invoke_ is still a memory outcome.
func TestCxxOutOfMemoryInsideInvoke(t *testing.T) {
	it := cxxTestInstance(t, cxxTestEngine(t))
	r := it.run(context.Background(), requestCell, string([]byte{fpGrow, 250}), time.Minute, 4096, cxxMemLimit)
	if !r.dead || r.outcome != port.OutcomeMemoryLimit {
		t.Errorf("a crash at the memory limit inside invoke_: %+v", r)
	}
}

// A call whose context lacks the instance's state, or has another's, gets
// the same answers (from fresh functions).
func TestCxxWithoutState(t *testing.T) {
	e := cxxTestEngine(t)
	it, other := cxxTestInstance(t, e), cxxTestInstance(t, e)
	for _, ctx := range []context.Context{context.Background(), other.callContext(context.Background())} {
		res, err := it.mod.ExportedFunction("invoke_at").Call(ctx, fpNest, 2)
		if err != nil || res[0] != 0 || cxxMem(t, it, cxxSeen+4) != 1 || cxxMem(t, it, cxxCont+8) != 1 {
			t.Errorf("nested invoke_ without the state: %v, %v", res, err)
		}
		res, err = it.mod.ExportedFunction("invoke_at").Call(ctx, fpMoveSP, 1)
		if sp, _ := it.mod.ExportedFunction("get_sp").Call(ctx); err != nil || res[0] != 1 || sp[0] != cxxStackTop {
			t.Errorf("throw without the state: %v, %v, stack pointer %v", res, err, sp)
		}
	}
	for _, st := range []*cxxState{it.cxx, other.cxx} {
		if len(st.sigs[0].fns) != 0 {
			t.Error("a call without the instance's state used it")
		}
	}
}

// An invoke_ that throws nothing allocates nothing.
func TestCxxInvokeAllocatesNothing(t *testing.T) {
	it := cxxTestInstance(t, cxxTestEngine(t))
	ctx := it.callContext(context.Background())
	fn := it.mod.ExportedFunction("invoke_at")
	stack := make([]uint64, 2)
	call := func() {
		stack[0], stack[1] = fpOK, 1
		if err := fn.CallWithStack(ctx, stack); err != nil {
			t.Fatal(err)
		}
	}
	call()
	if n := testing.AllocsPerRun(100, call); n != 0 {
		t.Errorf("%v allocations per call through invoke_", n)
	}
}

// cxxChildEnv, set to a test's name, makes the test binary, run again by
// cxxInChild, run that test's body itself.
const cxxChildEnv = "CODEPORT_TEST_CXX_CHILD"

// cxxInChild runs body in a child process running the test t alone, so
// that a fault in compiled code, which kills the process, fails t instead
// of ending go test.
func cxxInChild(t *testing.T, body func(t *testing.T)) {
	t.Helper()
	if os.Getenv(cxxChildEnv) == t.Name() {
		body(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), cxxChildEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("the test's child process: %v\n%s", err, out)
	}
}

// A 32-bit value reaches invoke_ in a 64-bit slot whose upper half need
// not be zero: wazero stores only the low half of an i32 argument, so the
// slot keeps the upper half of what it last held (in stale_slot_at,
// invoke_vii's p lands where fd_seek's i64 was). invoke_ hands such slots
// on to its dispatcher, and the dispatcher's result back. Every pointer
// here must reach memory as the 32-bit address it is: one made by
// i32.wrap_i64 of a wider value (dirty_arg_at), a result made that way
// (dirty_result_at), one in a stale slot (stale_slot_at). wazero 1.12's
// compiled code reads a 32-bit value from a slot with a 32-bit move, and
// i32.wrap_i64 is one too, so this holds even without invoke_'s
// zero-extension, which TestCxxInvokeZeroExtends checks; this test guards
// against a wazero that would not. A wild address would fault and kill
// the process, hence the child.
func TestCxxInvokeDirtyUpperHalves(t *testing.T) {
	cxxInChild(t, func(t *testing.T) {
		it := cxxTestInstance(t, cxxTestEngine(t))
		const want = 0xc0ffee
		if !it.mod.Memory().WriteUint32Le(cxxDirty, want) {
			t.Fatal("write out of range")
		}
		for range 3 { // slots reused after the first call
			if r := uint32(mustCxxCall(t, it, "dirty_arg_at", fpLoad)[0]); r != want {
				t.Errorf("invoke_ii(load_ii, wrapped pointer) = %#x, want %#x", r, want)
			}
			if r := uint32(mustCxxCall(t, it, "dirty_result_at", fpWrap, cxxDirty)[0]); r != want {
				t.Errorf("[invoke_ii(wrap_ii, %d)] = %#x, want %#x", cxxDirty, r, want)
			}
			mustCxxCall(t, it, "stale_slot_at", fpCopy, cxxDirty, cxxCopy)
			if v := cxxMem(t, it, cxxCopy); v != want {
				t.Errorf("copy_vii through a stale slot stored %#x, want %#x", v, want)
			}
		}
	})
}

// invoke_ hands the dispatcher its 32-bit params, and returns its 32-bit
// result, with the slots' upper halves cleared (see invokeFunc.narrow):
// called as wazero may call it, with dirty slots, and without the
// instance's state in the context too.
func TestCxxInvokeZeroExtends(t *testing.T) {
	e := cxxTestEngine(t)
	it := cxxTestInstance(t, e)
	ii, vii := e.cxx.invokes[1], e.cxx.invokes[2]
	for _, ctx := range []context.Context{it.callContext(context.Background()), context.Background()} {
		stack := []uint64{cxxDirtyHigh | fpOKII, cxxDirtyHigh | 41}
		ii.Call(ctx, it.mod, stack)
		if stack[0] != 42 {
			t.Errorf("invoke_ii(ok_ii, 41) left %#x in its result's slot, want 42", stack[0])
		}
		stack = []uint64{cxxDirtyHigh | fpSum, cxxDirtyHigh | 2, 0xffffffff_00000003}
		vii.Call(ctx, it.mod, stack)
		if v := cxxMem(t, it, cxxSum); v != 5 {
			t.Errorf("sum_vii stored %d, want 5", v)
		}
		// The dispatcher returns nothing: the slots are what it was given.
		if stack[0] != fpSum || stack[1] != 2 || stack[2] != 3 {
			t.Errorf("invoke_vii handed its dispatcher %#x", stack)
		}
	}
}

// The host refuses, at engine start, the imports it cannot provide.
func TestCxxHostRefuses(t *testing.T) {
	// A module of one import, patched when the patch allows it.
	module := func(mod, field string, params, results []byte, withTable bool) []byte {
		u := func(n int) byte { return byte(n) }
		typ := append(append(append([]byte{0x60, u(len(params))}, params...), u(len(results))), results...)
		imp := append(append(append([]byte{u(len(mod))}, mod...), u(len(field))), field...)
		imp = append(imp, 0x00, 0x00)
		sec := func(id byte, payload []byte) []byte { return append([]byte{id, u(len(payload))}, payload...) }
		b := append([]byte("\x00asm\x01\x00\x00\x00"), sec(1, append([]byte{1}, typ...))...)
		b = append(b, sec(2, append([]byte{1}, imp...))...)
		if withTable {
			b = append(b, sec(4, []byte{1, 0x70, 0x00, 0x01})...)
		}
		return b
	}
	const i32, f32, ext = 0x7f, 0x7d, 0x6f
	ctx := context.Background()
	check := func(name string, bin []byte, patch bool, want string) {
		t.Run(name, func(t *testing.T) {
			if patch {
				var err error
				if bin, _, err = wasmpatch.Patch(bin); err != nil {
					t.Fatal(err)
				}
			}
			rt := wazero.NewRuntime(ctx)
			defer rt.Close(ctx)
			compiled, err := rt.CompileModule(ctx, bin)
			if err != nil {
				t.Fatal(err)
			}
			h, err := newCxxHost(compiled, bin)
			if want == "" {
				if err != nil || h != nil {
					t.Errorf("newCxxHost = %+v, %v; want nil, nil", h, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("newCxxHost: %v; want an error saying %q", err, want)
			}
		})
	}
	check("no C++ imports", module("wasi_snapshot_preview1", "proc_exit", []byte{i32}, nil, false), true, "")
	check("other env import", module("env", "getTempRet0", nil, []byte{i32}, false), true,
		"imports env.getTempRet0: the host provides only env.invoke_*")
	check("unpatched", module("env", "invoke_v", []byte{i32}, nil, true), false, "exports no dispatcher codeport_invoke.v")
	check("externref", module("env", "invoke_vr", []byte{i32, ext}, nil, true), true, "want (i32, numbers...)")
	check("other codeport_cxx import", module("codeport_cxx", "rethrow", nil, nil, false), true,
		"the host provides only codeport_cxx.throw")
	check("throw with a parameter", module("codeport_cxx", "throw", []byte{i32}, nil, false), true, "of type (i32) -> ()")
	check("no stack pointer", module("env", "invoke_vf", []byte{i32, f32}, nil, true), true,
		"does not export its stack pointer (global 0) as codeport_global.0")
}

// BenchmarkCxxInvoke is the cost of one invoke_ whose function returns
// normally (ns/op), against BenchmarkCxxCallIndirect, the same call made
// directly; BenchmarkCxxInvokeUncached is invoke_ without the instance's
// state in the call's context.
func BenchmarkCxxInvoke(b *testing.B) {
	it := cxxTestInstance(b, cxxTestEngine(b))
	benchLoop(b, "loop_invoke", fpOK, it.callContext(context.Background()), it)
}

func BenchmarkCxxInvokeUncached(b *testing.B) {
	it := cxxTestInstance(b, cxxTestEngine(b))
	benchLoop(b, "loop_invoke", fpOK, context.Background(), it)
}

func BenchmarkCxxCallIndirect(b *testing.B) {
	it := cxxTestInstance(b, cxxTestEngine(b))
	benchLoop(b, "loop_call", fpOK, it.callContext(context.Background()), it)
}

// BenchmarkCxxThrow is the cost of one throw caught by the invoke_ around
// it (ns/op).
func BenchmarkCxxThrow(b *testing.B) {
	it := cxxTestInstance(b, cxxTestEngine(b))
	benchLoop(b, "loop_invoke", fpThrow, it.callContext(context.Background()), it)
}

func benchLoop(b *testing.B, export string, fp uint64, ctx context.Context, it *interpreter) {
	fn := it.mod.ExportedFunction(export)
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := fn.Call(ctx, fp, uint64(b.N)); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCxxStateLookup compares the ways invoke_ could find its
// instance's state (see cxxState): a value of the call's context, as
// run's context has it, and a sync.Map keyed by the instance.
func BenchmarkCxxStateLookup(b *testing.B) {
	e := cxxTestEngine(b)
	it := cxxTestInstance(b, e)
	b.Run("context", func(b *testing.B) {
		ctx := it.callContext(context.Background())
		for b.Loop() {
			if st, _ := ctx.Value(cxxStateKey{}).(*cxxState); st == nil || st.mod != it.mod {
				b.Fatal("no state")
			}
		}
	})
	b.Run("sync.Map", func(b *testing.B) {
		var states sync.Map
		var mod api.Module = it.mod
		for range 64 { // other instances' states
			other := cxxTestInstance(b, e)
			states.Store(other.mod, other.cxx)
		}
		states.Store(mod, it.cxx)
		for b.Loop() {
			if v, _ := states.Load(mod); v == nil {
				b.Fatal("no state")
			}
		}
	})
}

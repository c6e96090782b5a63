package wasmpatch

// Behaviour of patched modules under wazero, the host they are made for.

import (
	"bytes"
	"context"
	"maps"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/codeport/codeport/internal/testkit/testwait"
)

func mustPatch(t testing.TB, in []byte) ([]byte, Stats) {
	t.Helper()
	out, stats, err := Patch(in)
	if err != nil {
		t.Fatalf("Patch: %v", err)
	}
	return out, stats
}

func newRuntime(t testing.TB, cfg wazero.RuntimeConfig) wazero.Runtime {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	t.Cleanup(func() { _ = rt.Close(ctx) })
	return rt
}

// instantiate compiles and instantiates bin under name, running no start
// function, as the host does.
func instantiate(t testing.TB, rt wazero.Runtime, bin []byte, name string) api.Module {
	t.Helper()
	ctx := context.Background()
	compiled, err := rt.CompileModule(ctx, bin)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	mod, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName(name).WithStartFunctions())
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	return mod
}

func call(t testing.TB, mod api.Module, name string, params ...uint64) []uint64 {
	t.Helper()
	fn := mod.ExportedFunction(name)
	if fn == nil {
		t.Fatalf("no exported function %q", name)
	}
	res, err := fn.Call(context.Background(), params...)
	if err != nil {
		t.Fatalf("%s%v: %v", name, params, err)
	}
	return res
}

// (a) Setting the interrupt global from another goroutine stops a loop
// that would never end, with a trap.
func TestInterruptStopsRunningLoop(t *testing.T) {
	patched, stats := mustPatch(t, spinModule())
	if stats.Loops != 3 {
		t.Errorf("Loops = %d, want 3", stats.Loops)
	}
	for _, e := range engines() {
		if e.name == "interpreter" && raceEnabled {
			// The interpreter reads globals in Go: a concurrent Set is a
			// data race the detector reports (the host uses the compiler).
			continue
		}
		for _, fn := range []string{"spin", "spin_nested"} {
			t.Run(e.name+"/"+fn, func(t *testing.T) { expectInterruptible(t, e, patched, fn) })
		}
	}
}

// expectInterruptible calls fn of the patched module, a function that
// never returns of itself, on engine e, and checks that it is still
// running after a while, garbage collections included, and that setting
// InterruptGlobal then ends it with a trap.
func expectInterruptible(t *testing.T, e engine, patched []byte, fn string) {
	t.Helper()
	mod := instantiate(t, newRuntime(t, e.config), patched, "")
	done := make(chan error, 1)
	go func() {
		_, err := mod.ExportedFunction(fn).Call(context.Background())
		done <- err
	}()
	// It must still be running: nothing but the interrupt
	// can end it. A short look is enough to catch an early
	// return, and a slow machine cannot make it fail.
	select {
	case err := <-done:
		t.Fatalf("%s returned before the interrupt: %v", fn, err)
	case <-time.After(50 * time.Millisecond):
	}
	collectWhileSpinning()
	interrupt, ok := mod.ExportedGlobal(InterruptGlobal).(api.MutableGlobal)
	if !ok {
		t.Fatalf("%s is not an exported mutable global", InterruptGlobal)
	}
	interrupt.Set(1)
	// Not interrupted, the loop would never end: wait for
	// as long as the test binary allows.
	wait, cancel := testwait.Context(t)
	defer cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("%s returned %v, want an unreachable trap", fn, err)
		}
	case <-wait.Done():
		t.Fatalf("%s still running long after the interrupt", fn)
	}
}

// collectWhileSpinning runs garbage collections while compiled code spins.
// Compiled code cannot be preempted by the Go runtime: without the
// safepoint's exit to Go, a collection's stop-the-world would wait for the
// spinning loop forever, and with it every goroutine of the process. A
// regression shows as this test hanging until go test's -timeout.
func collectWhileSpinning() {
	for range 5 {
		runtime.GC()
	}
}

// The check does not change the result of a call that is not interrupted.
func TestUninterruptedLoopCompletes(t *testing.T) {
	patched, _ := mustPatch(t, benchModule())
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			mod := instantiate(t, newRuntime(t, e.config), patched, "")
			if got, want := uint32(call(t, mod, "run", 100000)[0]), benchResult(100000); got != want {
				t.Fatalf("run(100000) = %d, want %d", got, want)
			}
			if got := mod.ExportedGlobal(InterruptGlobal).Get(); got != 0 {
				t.Fatalf("%s = %d, want 0", InterruptGlobal, got)
			}
		})
	}
}

// (b) Active segments are no longer copied at instantiation, only by
// InitDataFunc, which leaves memory as instantiating the original did.
func TestInitDataCopiesSegments(t *testing.T) {
	tests := []struct {
		name     string
		module   []byte
		segments int
		spots    map[uint32]string // memory contents expected at offsets after init
	}{
		{"two active", twoSegmentModule(), 2, map[uint32]string{16: "hello, world", 1000: "\xde\xad\xbe\xef\x00\x01"}},
		{"active passive active", mixedSegmentModule(), 2, map[uint32]string{14: "thirdst\x00"}},
	}
	for _, tc := range tests {
		patched, stats := mustPatch(t, tc.module)
		if stats.DataSegments != tc.segments {
			t.Errorf("%s: DataSegments = %d, want %d", tc.name, stats.DataSegments, tc.segments)
		}
		for _, e := range engines() {
			t.Run(tc.name+"/"+e.name, func(t *testing.T) {
				rt := newRuntime(t, e.config)
				want := instantiate(t, rt, tc.module, "original").Memory()
				mod := instantiate(t, rt, patched, "patched")
				mem := mod.Memory()
				if !bytes.Equal(read(t, mem, 0, mem.Size()), make([]byte, mem.Size())) {
					t.Fatal("memory is not all zero before init")
				}

				init := mod.ExportedFunction(InitDataFunc)
				if init == nil {
					t.Fatalf("no exported function %s", InitDataFunc)
				}
				if d := init.Definition(); len(d.ParamTypes()) != 0 || len(d.ResultTypes()) != 0 {
					t.Fatalf("%s has type %v -> %v, want () -> ()", InitDataFunc, d.ParamTypes(), d.ResultTypes())
				}
				call(t, mod, InitDataFunc)
				if !bytes.Equal(read(t, mem, 0, mem.Size()), read(t, want, 0, want.Size())) {
					t.Fatal("memory after init differs from the original's after instantiation")
				}
				for off, want := range tc.spots { // in case both are wrong the same way
					if got := string(read(t, mem, off, uint32(len(want)))); got != want {
						t.Errorf("memory at %d = %q, want %q", off, got, want)
					}
				}

				// The segments were dropped: a second init traps.
				if _, err := init.Call(context.Background()); err == nil {
					t.Fatalf("second %s call succeeded; want a trap on dropped segments", InitDataFunc)
				}

				if copyPassive := mod.ExportedFunction("copy_passive"); copyPassive != nil {
					call(t, mod, "copy_passive")
					if got := string(read(t, mem, 2000, 8)); got != "passive!" {
						t.Fatalf("passive segment 1 copied %q, want %q", got, "passive!")
					}
				}
			})
		}
	}
}

func read(t testing.TB, mem api.Memory, off, n uint32) []byte {
	t.Helper()
	b, ok := mem.Read(off, n)
	if !ok {
		t.Fatalf("memory read %d+%d out of range", off, n)
	}
	return bytes.Clone(b)
}

// (c) Mutable globals not exported before can be read and written by the
// host under their index; the others are left alone.
func TestMutableGlobalsExported(t *testing.T) {
	patched, stats := mustPatch(t, globalsModule())
	if stats.ExportedGlobals != 2 {
		t.Errorf("ExportedGlobals = %d, want 2", stats.ExportedGlobals)
	}
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			rt := newRuntime(t, e.config)
			instantiate(t, rt, providerModule(), "env")
			mod := instantiate(t, rt, patched, "patched")

			wantGlobals := map[string]uint32{"counter": 3, InterruptGlobal: 5, "codeport_global.1": 1, "codeport_global.4": 4}
			gotGlobals := map[string]uint32{}
			for name, ex := range exportsOf(t, patched) {
				if ex.kind == externGlobal {
					gotGlobals[name] = ex.index
				}
			}
			if !maps.Equal(gotGlobals, wantGlobals) {
				t.Errorf("exported globals %v, want %v", gotGlobals, wantGlobals)
			}
			if g := mod.ExportedGlobal("codeport_global.2"); g != nil {
				t.Error("the immutable global 2 was exported")
			}

			sp, ok := mod.ExportedGlobal("codeport_global.1").(api.MutableGlobal)
			if !ok {
				t.Fatal("codeport_global.1 is not a mutable global")
			}
			if got := sp.Get(); got != 65536 {
				t.Fatalf("stack pointer = %d, want 65536", got)
			}
			call(t, mod, "push_frame") // the guest writes, the host reads
			if got := sp.Get(); got != 65536-16 {
				t.Fatalf("stack pointer after push_frame = %d, want %d", got, 65536-16)
			}
			sp.Set(1234) // the host writes, the guest reads
			if got := call(t, mod, "get_sp")[0]; got != 1234 {
				t.Fatalf("get_sp after Set(1234) = %d", got)
			}
			if got := mod.ExportedGlobal("codeport_global.4").Get(); got != 5 {
				t.Fatalf("codeport_global.4 = %d, want 5", got)
			}
			if got := call(t, mod, "imported_plus_const")[0]; got != 99+7 {
				t.Fatalf("imported_plus_const = %d, want 106", got)
			}
		})
	}
}

// (d) Patched code computes what the original did.
func TestPatchedCodeComputesTheSame(t *testing.T) {
	original := computeModule()
	patched, stats := mustPatch(t, original)
	if stats.Functions != 6 || stats.Loops != 4 {
		t.Errorf("Functions, Loops = %d, %d, want 6, 4", stats.Functions, stats.Loops)
	}
	fact := func(n uint32) uint32 {
		r := uint32(1)
		for ; n > 0; n-- {
			r *= n
		}
		return r
	}
	sum := func(n uint32) uint32 {
		if int32(n) <= 0 {
			return 0
		}
		return n * (n + 1) / 2
	}
	classify := func(x uint32) uint32 { return [...]uint32{100, 200, 300}[min(x, 2)] }
	nested := func(n uint32) uint32 { return n * (n - 1) / 2 }
	misc := func(x uint32) uint32 {
		if int32(x) > 0 {
			return uint32(int32(int8(x)))
		}
		return 0xffffffff
	}
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			rt := newRuntime(t, e.config)
			modules := []api.Module{instantiate(t, rt, original, "original"), instantiate(t, rt, patched, "patched")}
			check := func(name string, want uint32, params ...uint64) {
				t.Helper()
				for _, mod := range modules {
					if got := uint32(call(t, mod, name, params...)[0]); got != want {
						t.Errorf("%s: %s%v = %d, want %d", mod.Name(), name, params, got, want)
					}
				}
			}
			for _, n := range []uint32{0, 1, 2, 5, 10, 12} {
				check("fact", fact(n), uint64(n))
				check("sum", sum(n), uint64(n))
				check("classify", classify(n), uint64(n))
				check("nested", nested(n), uint64(n))
				check("dispatch", fact(n), 0, uint64(n))
				check("dispatch", sum(n), 1, uint64(n))
			}
			for _, x := range []uint32{0, 1, 127, 128, 200, 0xffffffff} {
				check("misc", misc(x), uint64(x))
			}
		})
	}
}

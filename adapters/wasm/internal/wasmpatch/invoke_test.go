package wasmpatch

// Dispatchers for env.invoke_* imports (LLVM's Emscripten-style C++
// exceptions and setjmp/longjmp).

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// More value types and instructions than encoder_test.go has.
const (
	tF32 = 0x7d
	tF64 = 0x7c
)

func invokeImportEntry(name string, typ uint32) []byte {
	return cat(str("env"), str(name), []byte{externFunc}, uleb(uint64(typ)))
}

// The exact bytes of the smallest module with an invoke_ import: the
// dispatcher's type comes after () -> (), which the module lacks too, its
// function after the safepoint, its export last, its body after the
// safepoint's.
func TestInvokeGolden(t *testing.T) {
	in := wasmModule(
		vecSec(secType, funcType([]byte{tI32}, nil)),
		vecSec(secImport, invokeImportEntry("invoke_v", 0)),
		vecSec(secTable, []byte{tFuncref, 0x00, 0x01}),
	)
	want := wasmModule(
		vecSec(secType, funcType([]byte{tI32}, nil), funcType(nil, nil)), // () -> () is both the added functions' and the call's
		vecSec(secImport, invokeImportEntry("invoke_v", 0)),
		vecSec(secFunction, uleb(1), uleb(1), uleb(0)), // the dispatcher has the import's type
		vecSec(secTable, []byte{tFuncref, 0x00, 0x01}),
		vecSec(secMemory, []byte{0x01, 0x00, 0x00}), // for the safepoint
		vecSec(secGlobal,
			[]byte{tI32, 0x01, opI32Const, 0x00, opEnd},
			append(append([]byte{tI32, 0x01}, i32Const(SafepointInterval)...), opEnd)),
		vecSec(secExport,
			exportEntry(InterruptGlobal, externGlobal, 0),
			exportEntry(InitDataFunc, externFunc, 1),
			exportEntry(InvokeExportPrefix+"v", externFunc, 3)),
		rawSection(secDataCount, uleb(0)),
		vecSec(secCode,
			body(nil),
			body(nil,
				i32Const(SafepointInterval), []byte{opGlobalSet, 1},
				i32Const(0), []byte{opMemoryGrow, 0x00, opDrop},
				globalGet(0), ifOp(), []byte{opUnreachable}, end),
			body(nil, localGet(0), callIndirect(1, 0))),
	)
	got, stats := mustPatch(t, in)
	if !bytes.Equal(got, want) {
		t.Fatalf("Patch output\n got % x\nwant % x", got, want)
	}
	wantStats := Stats{Invokes: 1, InputSize: len(in), OutputSize: len(want)}
	if stats != wantStats {
		t.Fatalf("stats = %+v, want %+v", stats, wantStats)
	}
	if s := stats.String(); !strings.Contains(s, "1 invoke dispatchers added") {
		t.Errorf("Stats.String() = %q; want it to count the dispatchers", s)
	}
}

// A dispatcher's call type is a type the module has when it has one equal
// (the first), else one appended once for every dispatcher that needs it;
// existing indices never move, and a module that has every type it needs
// keeps its type section byte for byte.
func TestInvokeTypes(t *testing.T) {
	typeSection := func(bin []byte) []byte {
		for _, s := range sectionsOf(t, bin) {
			if s.id == secType {
				return s.payload
			}
		}
		return nil
	}
	// callTypes decodes the call_indirect type of each dispatcher, the
	// last n bodies of the code section.
	callTypes := func(bin []byte, n int) []uint64 {
		var code []byte
		for _, s := range sectionsOf(t, bin) {
			if s.id == secCode {
				code = s.payload
			}
		}
		count, k := readUleb(t, code)
		code = code[k:]
		var types []uint64
		for i := range count {
			size, k := readUleb(t, code)
			b := code[k : k+int(size)]
			code = code[k+int(size):]
			if i < count-uint64(n) {
				continue
			}
			at := bytes.IndexByte(b, opCallIndirect)
			typ, _ := readUleb(t, b[at+1:])
			types = append(types, typ)
		}
		return types
	}
	table := vecSec(secTable, []byte{tFuncref, 0x00, 0x01})

	t.Run("all present", func(t *testing.T) {
		types := vecSec(secType,
			funcType([]byte{tI32, tI32}, []byte{tI32}), // invoke_ii
			funcType(nil, nil),
			funcType([]byte{tI32}, []byte{tI32}), // its call
			funcType([]byte{tI32}, []byte{tI32}), // a duplicate: the first is used
			funcType([]byte{tI32}, nil))          // invoke_v: calls () -> ()
		in := wasmModule(types,
			vecSec(secImport, invokeImportEntry("invoke_ii", 0), invokeImportEntry("invoke_v", 4)),
			table)
		out, stats := mustPatch(t, in)
		if !bytes.Equal(typeSection(out), typeSection(in)) {
			t.Errorf("type section changed:\n got % x\nwant % x", typeSection(out), typeSection(in))
		}
		if got := callTypes(out, 2); len(got) != 2 || got[0] != 2 || got[1] != 1 {
			t.Errorf("call types %v, want [2 1]", got)
		}
		if stats.Invokes != 2 {
			t.Errorf("Invokes = %d, want 2", stats.Invokes)
		}
	})
	t.Run("appended", func(t *testing.T) {
		in := wasmModule(
			vecSec(secType,
				funcType([]byte{tI32, tI64, tF32}, []byte{tF64}),  // invoke_djf
				funcType([]byte{tI32, tI64, tF32}, nil),           // invoke_vjf
				funcType([]byte{tI32, tI32, tI32}, []byte{tI32})), // invoke_iii
			vecSec(secImport,
				invokeImportEntry("invoke_djf", 0),
				invokeImportEntry("invoke_vjf", 1),
				cat(str("env"), str("invoke_g"), []byte{externGlobal, tI32, 0x00}), // not a function: no dispatcher
				cat(str("other"), str("invoke_v"), []byte{externFunc}, uleb(1)),    // not env: none either
				invokeImportEntry("invoke_iii", 2),
				invokeImportEntry("invoke_djf2", 0)), // the same call type again
			table)
		out, stats := mustPatch(t, in)
		want := cat(uleb(7),
			funcType([]byte{tI32, tI64, tF32}, []byte{tF64}),
			funcType([]byte{tI32, tI64, tF32}, nil),
			funcType([]byte{tI32, tI32, tI32}, []byte{tI32}),
			funcType(nil, nil),                         // 3: for InitDataFunc and the safepoint
			funcType([]byte{tI64, tF32}, []byte{tF64}), // 4
			funcType([]byte{tI64, tF32}, nil),          // 5
			funcType([]byte{tI32, tI32}, []byte{tI32})) // 6
		if got := typeSection(out); !bytes.Equal(got, want) {
			t.Errorf("type section\n got % x\nwant % x", got, want)
		}
		if got := callTypes(out, 4); len(got) != 4 || got[0] != 4 || got[1] != 5 || got[2] != 6 || got[3] != 4 {
			t.Errorf("call types %v, want [4 5 6 4]", got)
		}
		if stats.Invokes != 4 {
			t.Errorf("Invokes = %d, want 4", stats.Invokes)
		}
		exports := exportsOf(t, out)
		// Five imported functions, other.invoke_v included, come before
		// the defined ones: the added functions are 5 (InitDataFunc), 6
		// (the safepoint), then the dispatchers.
		for name, idx := range map[string]uint32{"djf": 7, "vjf": 8, "iii": 9, "djf2": 10} {
			if e, ok := exports[InvokeExportPrefix+name]; !ok || e.kind != externFunc || e.index != idx {
				t.Errorf("export %s%s = %+v, %v; want function %d", InvokeExportPrefix, name, e, ok, idx)
			}
		}
		if len(exports) != 6 {
			t.Errorf("%d exports, want 6: %v", len(exports), exports)
		}
	})
}

// A module without env.invoke_* function imports gets no dispatcher, and
// Patch writes it as it did before dispatchers existed (the golden tests
// pin those bytes).
func TestNoInvokeImportsNoDispatchers(t *testing.T) {
	for _, in := range [][]byte{computeModule(), globalsModule(), mixedSegmentModule(), spinModule()} {
		out, stats := mustPatch(t, in)
		if stats.Invokes != 0 {
			t.Errorf("Invokes = %d", stats.Invokes)
		}
		if strings.Contains(stats.String(), "invoke") {
			t.Errorf("Stats.String() = %q mentions dispatchers", stats.String())
		}
		for name := range exportsOf(t, out) {
			if strings.HasPrefix(name, InvokeExportPrefix) {
				t.Errorf("export %s", name)
			}
		}
	}
}

// Imports that cannot get a dispatcher are refused, and so is a module
// that exports one of their names itself.
func TestInvokeErrors(t *testing.T) {
	table := vecSec(secTable, []byte{tFuncref, 0x00, 0x01})
	mod := func(typ []byte, extra ...[]byte) []byte {
		return wasmModule(append([][]byte{vecSec(secType, typ), vecSec(secImport, invokeImportEntry("invoke_x", 0))}, extra...)...)
	}
	expectRefusals(t, []refusal{
		{"fp not i32", mod(funcType([]byte{tI64}, nil), table), ErrUnsupported,
			"import env.invoke_x: the first parameter (the function pointer) is not an i32"},
		{"no fp", mod(funcType(nil, nil), table), ErrUnsupported, "the first parameter"},
		{"two results", mod(funcType([]byte{tI32}, []byte{tI32, tI32}), table), ErrUnsupported, "2 results"},
		{"no table", mod(funcType([]byte{tI32}, nil)), ErrUnsupported, "no table"},
		{"externref table", mod(funcType([]byte{tI32}, nil), vecSec(secTable, []byte{0x6f, 0x00, 0x01})),
			ErrUnsupported, "not funcref"},
		{"type out of range",
			wasmModule(vecSec(secType, funcType([]byte{tI32}, nil)), vecSec(secImport, invokeImportEntry("invoke_v", 3)), table),
			ErrMalformed, "type index 3 is out of range"},
		{"imported twice",
			wasmModule(vecSec(secType, funcType([]byte{tI32}, nil)),
				vecSec(secImport, invokeImportEntry("invoke_v", 0), invokeImportEntry("invoke_v", 0)), table),
			ErrUnsupported, "imported twice"},
		{"reserved export",
			wasmModule(vecSec(secType, funcType(nil, nil)), vecSec(secFunction, uleb(0)),
				vecSec(secExport, exportEntry(InvokeExportPrefix+"v", externFunc, 0)), vecSec(secCode, body(nil))),
			ErrUnsupported, "reserved"},
	})
	// An imported table is a table.
	in := wasmModule(vecSec(secType, funcType([]byte{tI32}, nil)),
		vecSec(secImport,
			cat(str("env"), str("__indirect_function_table"), []byte{externTable, tFuncref, 0x00, 0x01}),
			invokeImportEntry("invoke_v", 0)))
	if _, stats := mustPatch(t, in); stats.Invokes != 1 {
		t.Errorf("imported table: Invokes = %d, want 1", stats.Invokes)
	}
}

// invokeModule imports four invoke_ functions and has a table of
// functions they can call:
//
//	0 double(x i32) i32 = 2x
//	1 store(a i64, b f32, c f64): stores them at 0, 8 and 16
//	2 mark(): stores 7 at 32
//	3 neg(x i64) i64 = -x
//
// and "run_ii"(fp, x) = invoke_ii(fp, x), through the import.
func invokeModule() []byte {
	return wasmModule(
		vecSec(secType,
			funcType([]byte{tI32, tI32}, []byte{tI32}),    // 0 invoke_ii, run_ii
			funcType([]byte{tI32}, []byte{tI32}),          // 1 double
			funcType([]byte{tI32, tI64, tF32, tF64}, nil), // 2 invoke_vjfd
			funcType([]byte{tI64, tF32, tF64}, nil),       // 3 store
			funcType([]byte{tI32}, nil),                   // 4 invoke_v
			funcType(nil, nil),                            // 5 mark
			funcType([]byte{tI32, tI64}, []byte{tI64}),    // 6 invoke_jj
			funcType([]byte{tI64}, []byte{tI64})),         // 7 neg
		vecSec(secImport,
			invokeImportEntry("invoke_ii", 0),
			invokeImportEntry("invoke_vjfd", 2),
			invokeImportEntry("invoke_v", 4),
			invokeImportEntry("invoke_jj", 6)),
		vecSec(secFunction, uleb(1), uleb(3), uleb(5), uleb(7), uleb(0)),
		vecSec(secTable, []byte{tFuncref, 0x00, 0x04}),
		vecSec(secMemory, []byte{0x00, 0x01}),
		vecSec(secExport,
			exportEntry("memory", externMemory, 0),
			exportEntry("run_ii", externFunc, 8)),
		vecSec(secElement, cat([]byte{0x00}, i32Const(0), end, vec(uleb(4), uleb(5), uleb(6), uleb(7)))),
		vecSec(secCode,
			body(nil, localGet(0), i32Const(2), i32Mul),
			body(nil,
				i32Const(0), localGet(0), []byte{0x37, 0x03, 0x00}, // i64.store
				i32Const(8), localGet(1), []byte{0x38, 0x02, 0x00}, // f32.store
				i32Const(16), localGet(2), []byte{0x39, 0x03, 0x00}), // f64.store
			body(nil, i32Const(32), i32Const(7), []byte{0x36, 0x02, 0x00}), // i32.store
			body(nil, []byte{opI64Const, 0x00}, localGet(0), []byte{0x7d}), // 0 - x
			body(nil, localGet(0), localGet(1), ins(opCall, uleb(0))),
		),
	)
}

// Each dispatcher calls the table entry its first argument names with the
// others, whatever their types, and returns its result; a host invoke_
// that calls the dispatcher is what the guest's call of the import
// reaches.
func TestDispatchersCallThroughTheTable(t *testing.T) {
	patched, stats := mustPatch(t, invokeModule())
	if stats.Invokes != 4 {
		t.Fatalf("Invokes = %d, want 4", stats.Invokes)
	}
	ctx := context.Background()
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			rt := newRuntime(t, e.config)
			// The host side of the imports, in its simplest form: call
			// the dispatcher (a fresh api.Function, since the caller's
			// may be on the stack).
			env := rt.NewHostModuleBuilder("env")
			compiled, err := rt.CompileModule(ctx, patched)
			if err != nil {
				t.Fatal(err)
			}
			for _, def := range compiled.ImportedFunctions() {
				_, name, _ := def.Import()
				export := InvokeExportPrefix + strings.TrimPrefix(name, InvokeImportPrefix)
				env.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
					if err := mod.ExportedFunction(export).CallWithStack(ctx, stack); err != nil {
						panic(err)
					}
				}), def.ParamTypes(), def.ResultTypes()).Export(name)
			}
			if _, err := env.Instantiate(ctx); err != nil {
				t.Fatal(err)
			}
			mod, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithStartFunctions())
			if err != nil {
				t.Fatal(err)
			}
			call(t, mod, InitDataFunc)

			if got := call(t, mod, InvokeExportPrefix+"ii", 0, 21); got[0] != 42 {
				t.Errorf("ii(double, 21) = %d, want 42", got[0])
			}
			if got := call(t, mod, "run_ii", 0, 5); got[0] != 10 {
				t.Errorf("run_ii(double, 5) = %d, want 10 (through the host)", got[0])
			}
			call(t, mod, InvokeExportPrefix+"vjfd", 1, uint64(1)<<40+3, api.EncodeF32(1.5), api.EncodeF64(math.Pi))
			mem := mod.Memory()
			a, _ := mem.ReadUint64Le(0)
			b, _ := mem.ReadFloat32Le(8)
			c, _ := mem.ReadFloat64Le(16)
			if a != 1<<40+3 || b != 1.5 || c != math.Pi {
				t.Errorf("vjfd(store, ...) stored %d, %v, %v", a, b, c)
			}
			call(t, mod, InvokeExportPrefix+"v", 2)
			if v, _ := mem.ReadUint32Le(32); v != 7 {
				t.Errorf("v(mark) stored %d, want 7", v)
			}
			if got := call(t, mod, InvokeExportPrefix+"jj", 3, 5); int64(got[0]) != -5 {
				t.Errorf("jj(neg, 5) = %d, want -5", int64(got[0]))
			}
			// The call's type is checked like any call_indirect.
			if _, err := mod.ExportedFunction(InvokeExportPrefix+"ii").Call(ctx, 2, 0); err == nil ||
				!strings.Contains(err.Error(), "indirect call type mismatch") {
				t.Errorf("ii(mark) = %v; want a type mismatch trap", err)
			}
			if _, err := mod.ExportedFunction(InvokeExportPrefix+"v").Call(ctx, 9); err == nil ||
				!strings.Contains(err.Error(), "invalid table access") {
				t.Errorf("v(9) = %v; want an out-of-table trap", err)
			}
		})
	}
}

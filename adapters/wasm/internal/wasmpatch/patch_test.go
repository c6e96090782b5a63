package wasmpatch

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// The exact bytes of a small patch, so that every part of the encoding is
// pinned: the countdown after the loop's block type, the appended globals,
// the exports, DataCount before code, InitDataFunc's body and the
// safepoint's.
func TestPatchGolden(t *testing.T) {
	in := wasmModule(
		vecSec(secType, funcType(nil, nil)),
		vecSec(secFunction, uleb(0)),
		vecSec(secMemory, []byte{0x00, 0x01}),
		vecSec(secCode, body(nil, loop(), end)),
		vecSec(secData, activeData(-1, "ab")), // offset 0xffffffff: re-encoded as the same s32
	)
	want := wasmModule(
		vecSec(secType, funcType(nil, nil)), // () -> () reused
		vecSec(secFunction, uleb(0), uleb(0), uleb(0)),
		vecSec(secMemory, []byte{0x00, 0x01}),
		vecSec(secGlobal,
			[]byte{tI32, 0x01, opI32Const, 0x00, opEnd},                                // interrupt
			append(append([]byte{tI32, 0x01}, i32Const(SafepointInterval)...), opEnd)), // countdown
		vecSec(secExport,
			exportEntry(InterruptGlobal, externGlobal, 0),
			exportEntry(InitDataFunc, externFunc, 1)),
		rawSection(secDataCount, uleb(1)),
		vecSec(secCode,
			body(nil, loop(),
				globalGet(1), i32Const(1), []byte{opI32Sub, opGlobalSet, 1}, globalGet(1),
				[]byte{opI32Eqz}, ifOp(), []byte{opCall, 2}, end, end),
			body(nil,
				i32Const(-1), i32Const(0), i32Const(2),
				[]byte{opPrefixMisc, miscMemoryInit, 0x00, 0x00},
				[]byte{opPrefixMisc, miscDataDrop, 0x00}),
			body(nil,
				i32Const(SafepointInterval), []byte{opGlobalSet, 1},
				i32Const(0), []byte{opMemoryGrow, 0x00, opDrop},
				globalGet(0), ifOp(), []byte{opUnreachable}, end)),
		vecSec(secData, passiveData("ab")),
	)
	got, stats := mustPatch(t, in)
	if !bytes.Equal(got, want) {
		t.Fatalf("Patch output\n got % x\nwant % x", got, want)
	}
	wantStats := Stats{Functions: 1, Loops: 1, DataSegments: 1, InputSize: len(in), OutputSize: len(want)}
	if stats != wantStats {
		t.Fatalf("stats = %+v, want %+v", stats, wantStats)
	}
}

// Sections Patch adds go where the spec orders them; custom sections stay
// in place except DWARF, whose code offsets the patch invalidates.
func TestSectionLayout(t *testing.T) {
	withCustom := func(m []byte) []byte {
		secs := sectionsOf(t, m)
		var parts [][]byte
		parts = append(parts, customSec("first", []byte{1}))
		for _, s := range secs {
			parts = append(parts, rawSection(s.id, s.payload))
		}
		parts = append(parts,
			customSec(".debug_info", []byte{1, 2, 3}),
			customSec("producers", []byte{0}),
			customSec(".debug_line", []byte{4}))
		return wasmModule(parts...)
	}
	tests := []struct {
		name string
		in   []byte
		want []string
	}{
		{"all added", withCustom(twoSegmentModule()), []string{
			`custom "first"`, "type section", "function section", "memory section", "global section",
			"export section", "data count section", "code section", "data section", `custom "producers"`}},
		{"data count kept", withCustom(mixedSegmentModule()), []string{
			`custom "first"`, "type section", "function section", "memory section", "global section",
			"export section", "data count section", "code section", "data section", `custom "name"`, `custom "producers"`}},
		{"no data", withCustom(computeModule()), []string{
			`custom "first"`, "type section", "function section", "table section", "memory section", "global section",
			"export section", "element section", "data count section", "code section", `custom "producers"`}},
		{"empty module", wasmModule(), []string{
			"type section", "function section", "memory section", "global section", "export section", "data count section", "code section"}},
		{"only custom", wasmModule(customSec("c", nil)), []string{
			"type section", "function section", "memory section", "global section", "export section", "data count section", "code section", `custom "c"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, stats := mustPatch(t, tc.in)
			var got []string
			for _, s := range sectionsOf(t, out) {
				got = append(got, s.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("sections\n got %q\nwant %q", got, tc.want)
			}
			if strings.Contains(tc.name, "custom") || tc.name == "empty module" {
				return
			}
			if stats.DroppedSections != 2 {
				t.Errorf("DroppedSections = %d, want 2", stats.DroppedSections)
			}
		})
	}
}

func TestTypeSection(t *testing.T) {
	typeCount := func(bin []byte) uint64 {
		for _, s := range sectionsOf(t, bin) {
			if s.id == secType {
				n, _ := readUleb(t, s.payload)
				return n
			}
		}
		return 0
	}
	// spinModule has () -> () already; computeModule has two other types.
	for _, tc := range []struct {
		in   []byte
		want uint64
	}{{spinModule(), 1}, {computeModule(), 3}} {
		out, _ := mustPatch(t, tc.in)
		if got := typeCount(out); got != tc.want {
			t.Errorf("type count %d, want %d", got, tc.want)
		}
	}
}

func TestDeterministic(t *testing.T) {
	for _, in := range [][]byte{computeModule(), mixedSegmentModule(), globalsModule(), simdLoopModule()} {
		a, _ := mustPatch(t, in)
		b, _ := mustPatch(t, bytes.Clone(in))
		if !bytes.Equal(a, b) {
			t.Fatal("two patches of the same input differ")
		}
	}
}

func TestPatchLeavesInputAlone(t *testing.T) {
	in := mixedSegmentModule()
	before := bytes.Clone(in)
	mustPatch(t, in)
	if !bytes.Equal(in, before) {
		t.Fatal("Patch modified its input")
	}
}

// (e) Inputs Patch must refuse, each with the right kind of error and a
// message that says what is wrong.
func TestPatchErrors(t *testing.T) {
	fn := func(instrs ...[]byte) []byte {
		return wasmModule(
			vecSec(secType, funcType(nil, nil)),
			vecSec(secFunction, uleb(0)),
			vecSec(secCode, body(nil, instrs...)))
	}
	alreadyPatched, _ := mustPatch(t, spinModule())
	expectRefusals(t, []refusal{
		{"already patched", alreadyPatched, ErrAlreadyPatched, "already exports codeport_interrupt"},
		{"non-constant data offset",
			wasmModule(
				vecSec(secImport, cat(str("env"), str("base"), []byte{externGlobal, tI32, 0x00})),
				vecSec(secMemory, []byte{0x00, 0x01}),
				vecSec(secData, cat([]byte{0x00}, globalGet(0), end, str("x")))),
			ErrUnsupported, "data segment 0: offset is not a single i32.const but global.get"},
		{"extended-const data offset",
			wasmModule(
				vecSec(secMemory, []byte{0x00, 0x01}),
				vecSec(secData, cat([]byte{0x00}, i32Const(1), i32Const(2), i32Add, end, str("x")))),
			ErrUnsupported, "i32.const i32.const i32.add"},
		{"data for memory 1",
			wasmModule(vecSec(secData, cat([]byte{0x02, 0x01}, i32Const(0), end, str("x")))),
			ErrUnsupported, "memory 1"},
		{"reserved export name",
			wasmModule(vecSec(secType, funcType(nil, nil)), vecSec(secFunction, uleb(0)),
				vecSec(secExport, exportEntry(InitDataFunc, externFunc, 0)), vecSec(secCode, body(nil))),
			ErrUnsupported, "reserved"},
		{"relaxed SIMD first", fn([]byte{opPrefixSIMD, 0x80, 0x02}), ErrUnsupported,
			"relaxed SIMD instruction i8x16.relaxed_swizzle (opcode 0xfd 0x100) is not supported"},
		{"relaxed SIMD last", fn([]byte{opPrefixSIMD, 0x93, 0x02}), ErrUnsupported,
			"relaxed SIMD instruction i32x4.relaxed_dot_i8x16_i7x16_add_s (opcode 0xfd 0x113) is not supported"},
		{"unassigned SIMD opcode", fn([]byte{opPrefixSIMD, 0x9a, 0x01}), ErrMalformed, "unknown opcode 0xfd 0x9a"},
		{"SIMD opcode after relaxed SIMD", fn([]byte{opPrefixSIMD, 0x94, 0x02}), ErrMalformed, "unknown opcode 0xfd 0x114"},
		{"huge SIMD opcode", fn([]byte{opPrefixSIMD, 0xff, 0xff, 0xff, 0xff, 0x0f}), ErrMalformed, "unknown opcode 0xfd 0xffffffff"},
		{"SIMD opcode overflow", fn([]byte{opPrefixSIMD, 0xff, 0xff, 0xff, 0xff, 0x1f}), ErrMalformed, "0xfd sub-opcode: u32 LEB128"},
		{"v128.const cut short", fn(cat([]byte{opPrefixSIMD, 0x0c}, make([]byte, 14))), ErrMalformed, "16-byte immediate"},
		{"mutable v128 global",
			wasmModule(vecSec(secGlobal, global(tI32, true, 1), globalV128(true, 7))),
			ErrUnsupported, "global 1 is a mutable v128"},
		{"other SIMD in a constant expression",
			wasmModule(vecSec(secGlobal, cat([]byte{tV128, 0x00}, i32Const(1), []byte{opPrefixSIMD, 0x11, opEnd}))),
			ErrMalformed, "opcode 0xfd 0x11 is not allowed in a constant expression"},
		{"v128 data offset",
			wasmModule(vecSec(secMemory, []byte{0x00, 0x01}),
				vecSec(secData, cat([]byte{0x00}, v128Const(make([]byte, 16)), end, str("x")))),
			ErrUnsupported, "offset is not a single i32.const but v128.const"},
		{"atomics", fn([]byte{opPrefixAtomic, 0x10}), ErrUnsupported, "threads"},
		{"try", fn([]byte{0x06, blockTypeEmpty}, end), ErrUnsupported, "exception handling"},
		{"unknown opcode", fn([]byte{0x27}), ErrMalformed, "unknown opcode 0x27"},
		{"unknown 0xfc opcode", fn([]byte{opPrefixMisc, 0x12}), ErrMalformed, "unknown opcode 0xfc 0x12"},
		{"bad block type", fn([]byte{opBlock, 0x60}, end), ErrMalformed, "invalid block type 0x60"},
		{"negative type index", fn([]byte{opBlock, 0x7f&^0x40 | 0x80, 0x7f}, end), ErrMalformed, "invalid block type"},
		{"bytes after the end", fn(end, []byte{0x01}), ErrMalformed, "function body after its final end has 2 unexpected bytes"},
		{"unclosed block",
			wasmModule(vecSec(secType, funcType(nil, nil)), vecSec(secFunction, uleb(0)),
				vecSec(secCode, cat(uleb(3), []byte{0x00, opBlock, blockTypeEmpty}))),
			ErrMalformed, "function body ends inside 2 unclosed block(s)"},
		{"u32 too long", fn(localGet(0)[:1], []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}), ErrMalformed, "u32 LEB128 is too long"},
		{"u32 overflow", fn(localGet(0)[:1], []byte{0xff, 0xff, 0xff, 0xff, 0x1f}), ErrMalformed, "u32 LEB128 is too long or overflows"},
		{"i32.const overflow", fn([]byte{opI32Const, 0xff, 0xff, 0xff, 0xff, 0x4f}, []byte{0x1a}), ErrMalformed, "s32 LEB128"},
		{"bad magic", []byte("\x00asn\x01\x00\x00\x00"), ErrMalformed, "not a WebAssembly 1.0 binary"},
		{"version 2", []byte("\x00asm\x02\x00\x00\x00"), ErrMalformed, "not a WebAssembly 1.0 binary"},
		{"unknown section", wasmModule(rawSection(14, nil)), ErrMalformed, "unknown section id 14"},
		{"tag section", wasmModule(rawSection(secTag, vec())), ErrUnsupported, "tag section"},
		{"sections out of order", wasmModule(vecSec(secFunction), vecSec(secType)), ErrMalformed, "type section is out of order"},
		{"section repeated", wasmModule(vecSec(secType), vecSec(secType)), ErrMalformed, "out of order or repeated"},
		{"data count after code", wasmModule(vecSec(secCode), rawSection(secDataCount, uleb(0))), ErrMalformed, "out of order"},
		{"section past the end", cat(wasmModule(), []byte{secType, 0x05, 0x00}), ErrMalformed, "type section declares 5 bytes but only 1 remain"},
		{"section too long for content", wasmModule(rawSection(secType, []byte{0x00, 0x00})), ErrMalformed, "unexpected bytes"},
		{"functions without bodies", wasmModule(vecSec(secType, funcType(nil, nil)), vecSec(secFunction, uleb(0))),
			ErrMalformed, "declares 1 functions but code section has 0 bodies"},
		{"data count mismatch", wasmModule(rawSection(secDataCount, uleb(2))), ErrMalformed, "data count section says 2"},
		{"GC type", wasmModule(vecSec(secType, []byte{0x5f, 0x00})), ErrUnsupported, "not a function type"},
		{"memory64", wasmModule(vecSec(secImport, cat(str("env"), str("m"), []byte{externMemory, 0x04, 0x01}))),
			ErrUnsupported, "memory64"},
		{"bad value type", fn(nil, []byte{opSelectTyped, 0x01, 0x55}), ErrMalformed, "invalid select type 0x55"},
		{"non-constant global init",
			wasmModule(vecSec(secGlobal, []byte{tI32, 0x00, 0x20, 0x00, opEnd})),
			ErrMalformed, "opcode 0x20 is not allowed in a constant expression"},
		{"invalid UTF-8 name", wasmModule(customSec("\xff", nil)), ErrMalformed, "not valid UTF-8"},
		{"empty input", nil, ErrMalformed, "unexpected end of input"},
	})
}

// refusal is a module Patch must refuse: the kind of error, and a part of
// its message.
type refusal struct {
	name string
	in   []byte
	kind error
	msg  string
}

// expectRefusals checks that Patch refuses each module as said, with the
// package's prefix on the message.
func expectRefusals(t *testing.T, tests []refusal) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := Patch(tc.in)
			if err == nil {
				t.Fatalf("Patch succeeded (%d bytes); want an error", len(out))
			}
			if !errors.Is(err, tc.kind) {
				t.Errorf("error %q is not %v", err, tc.kind)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), "wasmpatch: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

// Errors point at the byte they are about, as an absolute file offset.
func TestErrorOffset(t *testing.T) {
	in := wasmModule(
		vecSec(secType, funcType(nil, nil)),
		vecSec(secFunction, uleb(0)),
		vecSec(secCode, body(nil, []byte{0x01, 0x01, opPrefixAtomic, 0x10})))
	at := bytes.IndexByte(in, opPrefixAtomic)
	_, _, err := Patch(in)
	var fe *formatError
	if !errors.As(err, &fe) || fe.offset != at {
		t.Fatalf("error %v; want one at offset %#x", err, at)
	}
	if !strings.Contains(err.Error(), "code section, function 0") {
		t.Errorf("error %q does not name the function", err)
	}
}

// (e) Every cut of a module inside a section is refused. Cuts between
// sections are left out: they are shorter but well-formed modules.
func TestTruncatedModule(t *testing.T) {
	for _, in := range [][]byte{computeModule(), mixedSegmentModule(), globalsModule(), simdLoopModule()} {
		boundaries := map[int]bool{8: true}
		pos := 8
		for _, s := range sectionsOf(t, in) {
			pos += 1 + len(uleb(uint64(len(s.payload)))) + len(s.payload)
			boundaries[pos] = true
		}
		for n := range len(in) {
			if boundaries[n] {
				continue
			}
			if _, _, err := Patch(in[:n]); !errors.Is(err, ErrMalformed) {
				t.Fatalf("Patch of the first %d of %d bytes: %v; want ErrMalformed", n, len(in), err)
			}
		}
	}
}

func TestSkipInstruction(t *testing.T) {
	tests := []struct {
		name string
		code []byte
	}{
		{"unreachable", []byte{0x00}},
		{"block empty", []byte{opBlock, 0x40}},
		{"loop i64", []byte{opLoop, tI64}},
		{"if funcref", []byte{opIf, tFuncref}},
		{"block type index 300", cat([]byte{opBlock}, sleb(300))},
		{"block type index max s33", cat([]byte{opBlock}, sleb(math.MaxUint32))},
		{"br_table", brTable(7, 1, 2, 300)},
		{"br_table empty", brTable(0)},
		{"call_indirect table 1", callIndirect(200, 1)},
		{"select", []byte{0x1b}},
		{"select t", []byte{opSelectTyped, 0x02, tI32, tI64}},
		{"i32.load8_u", []byte{0x2d, 0x00, 0x80, 0x01}},
		{"i64.store multi-memory", []byte{0x37, 0x43, 0x01, 0x10}},
		{"memory.grow", []byte{0x40, 0x00}},
		{"i32.const min", i32Const(math.MinInt32)},
		{"i64.const min", cat([]byte{opI64Const}, sleb(math.MinInt64))},
		{"i64.const max", cat([]byte{opI64Const}, sleb(math.MaxInt64))},
		{"f32.const", []byte{opF32Const, 1, 2, 3, 4}},
		{"f64.const", []byte{opF64Const, 1, 2, 3, 4, 5, 6, 7, 8}},
		{"i64.extend32_s", []byte{0xc4}},
		{"ref.null externref", []byte{opRefNull, 0x6f}},
		{"ref.is_null", []byte{0xd1}},
		{"ref.func", []byte{opRefFunc, 0x85, 0x01}},
		{"table.get", []byte{0x25, 0x01}},
		{"i64.trunc_sat_f64_u", []byte{opPrefixMisc, 0x07}},
		{"memory.init", []byte{opPrefixMisc, 0x08, 0x90, 0x03, 0x00}},
		{"data.drop", []byte{opPrefixMisc, 0x09, 0x90, 0x03}},
		{"memory.copy", []byte{opPrefixMisc, 0x0a, 0x00, 0x00}},
		{"memory.fill", []byte{opPrefixMisc, 0x0b, 0x00}},
		{"table.init", []byte{opPrefixMisc, 0x0c, 0x02, 0x00}},
		{"elem.drop", []byte{opPrefixMisc, 0x0d, 0x02}},
		{"table.copy", []byte{opPrefixMisc, 0x0e, 0x00, 0x01}},
		{"table.grow", []byte{opPrefixMisc, 0x0f, 0x00}},
		{"table.size", []byte{opPrefixMisc, 0x10, 0x00}},
		{"table.fill", []byte{opPrefixMisc, 0x11, 0x00}},
		{"0xfc opcode as a padded LEB", []byte{opPrefixMisc, 0x8b, 0x00, 0x00}}, // memory.fill
		{"v128.load", []byte{opPrefixSIMD, 0x00, 0x04, 0x80, 0x02}},
		{"v128.load64_splat", []byte{opPrefixSIMD, 0x0a, 0x03, 0x00}},
		{"v128.store multi-memory", []byte{opPrefixSIMD, 0x0b, 0x44, 0x01, 0x10}},
		{"v128.const", v128Const([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xfd})},
		{"i8x16.shuffle", cat([]byte{opPrefixSIMD, 0x0d}, []byte{31, 0, 30, 1, 29, 2, 28, 3, 27, 4, 26, 5, 25, 6, 24, 7})},
		{"i8x16.swizzle", []byte{opPrefixSIMD, 0x0e}},
		{"i8x16.extract_lane_s", []byte{opPrefixSIMD, 0x15, 15}},
		{"f64x2.replace_lane", []byte{opPrefixSIMD, 0x22, 1}},
		{"v128.bitselect", []byte{opPrefixSIMD, 0x52}},
		{"v128.load8_lane", []byte{opPrefixSIMD, 0x54, 0x00, 0x10, 15}},
		{"v128.store64_lane multi-memory", []byte{opPrefixSIMD, 0x5b, 0x43, 0x02, 0x08, 1}},
		{"v128.load64_zero", []byte{opPrefixSIMD, 0x5d, 0x03, 0x00}},
		{"i8x16.avgr_u", []byte{opPrefixSIMD, 0x7b}},
		{"i16x8.abs, a two-byte opcode", []byte{opPrefixSIMD, 0x80, 0x01}},
		{"f64x2.convert_low_i32x4_u", []byte{opPrefixSIMD, 0xff, 0x01}},
		{"0xfd opcode as a padded LEB", cat([]byte{opPrefixSIMD, 0x8c, 0x80, 0x00}, make([]byte, 16))}, // v128.const
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A following byte shows that decoding stops at the end.
			buf := append(bytes.Clone(tc.code), 0xff)
			r := &reader{buf: buf, end: len(buf)}
			if err := skipInstruction(r); err != nil {
				t.Fatalf("% x: %v", tc.code, err)
			}
			if r.pos != len(tc.code) {
				t.Fatalf("% x: decoded %d bytes, want %d", tc.code, r.pos, len(tc.code))
			}
			// Every cut is an error, not a panic.
			for n := range len(tc.code) {
				r := &reader{buf: tc.code[:n], end: n}
				if n > 0 && skipInstruction(r) == nil {
					t.Fatalf("% x cut to %d bytes decoded", tc.code, n)
				}
			}
		})
	}
}

func TestLEB128(t *testing.T) {
	for _, v := range []uint32{0, 1, 63, 64, 127, 128, 1<<14 - 1, 1 << 14, 1<<28 - 1, 1 << 28, math.MaxUint32} {
		b := appendU32(nil, v)
		if !bytes.Equal(b, uleb(uint64(v))) {
			t.Errorf("appendU32(%d) = % x, want % x", v, b, uleb(uint64(v)))
		}
		r := &reader{buf: b, end: len(b)}
		if got, err := r.u32("v"); err != nil || got != v || r.pos != len(b) {
			t.Errorf("u32(% x) = %d, %v", b, got, err)
		}
	}
	for _, v := range []int32{0, 1, -1, 63, 64, -64, -65, math.MaxInt32, math.MinInt32} {
		b := appendS32(nil, v)
		if !bytes.Equal(b, sleb(int64(v))) {
			t.Errorf("appendS32(%d) = % x, want % x", v, b, sleb(int64(v)))
		}
		r := &reader{buf: b, end: len(b)}
		if got, err := r.signed(32, "v"); err != nil || got != int64(v) || r.pos != len(b) {
			t.Errorf("signed(32, % x) = %d, %v", b, got, err)
		}
	}
	for _, v := range []int64{0, -1, -(1 << 32), math.MaxUint32} {
		b := sleb(v)
		r := &reader{buf: b, end: len(b)}
		if got, err := r.signed(33, "v"); err != nil || got != v {
			t.Errorf("signed(33, % x) = %d, %v; want %d", b, got, err, v)
		}
	}
	for _, v := range []int64{math.MaxInt64, math.MinInt64, 1 << 62, -(1 << 62)} {
		b := sleb(v)
		r := &reader{buf: b, end: len(b)}
		if got, err := r.signed(64, "v"); err != nil || got != v {
			t.Errorf("signed(64, % x) = %d, %v; want %d", b, got, err, v)
		}
	}
	bad := []struct {
		bits int
		b    []byte
	}{
		{32, sleb(math.MaxInt32 + 1)},
		{32, sleb(math.MinInt32 - 1)},
		{33, sleb(1 << 32)},
		{33, sleb(-(1 << 32) - 1)},
		{64, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}},
		{32, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}},
	}
	for _, tc := range bad {
		r := &reader{buf: tc.b, end: len(tc.b)}
		if v, err := r.signed(tc.bits, "v"); err == nil {
			t.Errorf("signed(%d, % x) = %d; want an error", tc.bits, tc.b, v)
		}
	}
}

// Sections Patch copies unchanged are still decoded, so that a malformed
// one is refused: here every form of element segment, and a start
// function, which must come out as they went in and still validate.
func TestCopiedSections(t *testing.T) {
	refFunc0 := cat(ins(opRefFunc, uleb(0)), end)
	elements := [][]byte{
		cat([]byte{0}, i32Const(0), end, vec(uleb(0))),                                 // active, table 0, indices
		cat([]byte{1, 0x00}, vec(uleb(0))),                                             // passive, indices
		cat([]byte{2}, uleb(0), i32Const(1), end, []byte{0x00}, vec(uleb(0))),          // active, table index, indices
		cat([]byte{3, 0x00}, vec(uleb(0))),                                             // declarative, indices
		cat([]byte{4}, i32Const(2), end, vec(refFunc0)),                                // active, table 0, expressions
		cat([]byte{5, tFuncref}, vec(refFunc0, cat([]byte{opRefNull, tFuncref}, end))), // passive, expressions
		cat([]byte{6}, uleb(0), i32Const(3), end, []byte{tFuncref}, vec(refFunc0)),     // active, table index, expressions
		cat([]byte{7, tFuncref}, vec(refFunc0)),                                        // declarative, expressions
	}
	in := wasmModule(
		vecSec(secType, funcType(nil, nil)),
		vecSec(secFunction, uleb(0)),
		vecSec(secTable, []byte{tFuncref, 0x01, 0x04, 0x04}),
		vecSec(secMemory, []byte{0x01, 0x01, 0x02}),
		rawSection(secStart, uleb(0)),
		vecSec(secElement, elements...),
		vecSec(secCode, body(nil)),
	)
	out, _ := mustPatch(t, in)
	copied := map[byte][]byte{}
	for _, s := range sectionsOf(t, out) {
		copied[s.id] = s.payload
	}
	for _, s := range sectionsOf(t, in) {
		if s.id != secType && s.id != secFunction && s.id != secCode && !bytes.Equal(copied[s.id], s.payload) {
			t.Errorf("%v changed", s)
		}
	}
	for _, e := range engines() {
		instantiate(t, newRuntime(t, e.config), out, "")
	}

	for flags := range len(elements) {
		bad := bytes.Clone(elements[flags])
		bad = bad[:len(bad)-1] // drop the last byte of its last element
		_, _, err := Patch(wasmModule(
			vecSec(secType, funcType(nil, nil)), vecSec(secFunction, uleb(0)),
			vecSec(secTable, []byte{tFuncref, 0x00, 0x04}), vecSec(secElement, bad), vecSec(secCode, body(nil))))
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("element segment form %d cut short: %v; want ErrMalformed", flags, err)
		}
	}
	if _, _, err := Patch(wasmModule(vecSec(secElement, []byte{8}))); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "unknown flags 8") {
		t.Errorf("element flags 8: %v", err)
	}
}

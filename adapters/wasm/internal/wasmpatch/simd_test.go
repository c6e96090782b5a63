package wasmpatch

// Fixed-width SIMD: every 0xfd instruction decoded, copied and run as the
// original ran it; a SIMD loop still interruptible; relaxed SIMD refused.

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/api"
)

// simdShape is how a test runs an instruction: the operands it takes from
// memory and where its result goes. It also fixes the immediates.
type simdShape int

const (
	shLoad      simdShape = iota // i32 -> v128, memarg
	shStore                      // v128.store: i32 v128 ->, memarg
	shConst                      // -> v128, 16 bytes
	shShuffle                    // v128 v128 -> v128, 16 lane bytes
	shUnary                      // v128 -> v128
	shBinary                     // v128 v128 -> v128
	shTernary                    // v128 v128 v128 -> v128
	shTest                       // v128 -> i32
	shShift                      // v128 i32 -> v128
	shSplat                      // scalar -> v128
	shExtract                    // v128 -> scalar, lane
	shReplace                    // v128 scalar -> v128, lane
	shLoadLane                   // i32 v128 -> v128, memarg and lane
	shStoreLane                  // i32 v128 ->, memarg and lane
)

// simdOp is one instruction of the SIMD proposal: its sub-opcode, how it
// runs, and for lane instructions and splats the scalar type and the
// number of lanes.
type simdOp struct {
	name   string
	op     uint32
	shape  simdShape
	scalar byte // splat, extract, replace: the scalar's value type
	lanes  byte // lane instructions: lanes of the shape
}

// simdOps lists every instruction of fixed-width SIMD (WebAssembly 2.0),
// written from the spec's instruction index apart from the package's
// table: wazero's decoder checks the encodings when it compiles them.
var simdOps = func() []simdOp {
	var ops []simdOp
	add := func(shape simdShape, first uint32, names ...string) {
		for i, n := range names {
			ops = append(ops, simdOp{name: n, op: first + uint32(i), shape: shape})
		}
	}
	lane := func(shape simdShape, op uint32, name string, scalar, lanes byte) {
		ops = append(ops, simdOp{name: name, op: op, shape: shape, scalar: scalar, lanes: lanes})
	}
	add(shLoad, 0x00, "v128.load", "v128.load8x8_s", "v128.load8x8_u", "v128.load16x4_s", "v128.load16x4_u",
		"v128.load32x2_s", "v128.load32x2_u", "v128.load8_splat", "v128.load16_splat", "v128.load32_splat",
		"v128.load64_splat")
	add(shStore, 0x0b, "v128.store")
	add(shConst, 0x0c, "v128.const")
	add(shShuffle, 0x0d, "i8x16.shuffle")
	add(shBinary, 0x0e, "i8x16.swizzle")
	for i, t := range []byte{tI32, tI32, tI32, tI64, tF32, tF64} {
		lane(shSplat, 0x0f+uint32(i), []string{"i8x16", "i16x8", "i32x4", "i64x2", "f32x4", "f64x2"}[i]+".splat", t, 0)
	}
	lane(shExtract, 0x15, "i8x16.extract_lane_s", tI32, 16)
	lane(shExtract, 0x16, "i8x16.extract_lane_u", tI32, 16)
	lane(shReplace, 0x17, "i8x16.replace_lane", tI32, 16)
	lane(shExtract, 0x18, "i16x8.extract_lane_s", tI32, 8)
	lane(shExtract, 0x19, "i16x8.extract_lane_u", tI32, 8)
	lane(shReplace, 0x1a, "i16x8.replace_lane", tI32, 8)
	lane(shExtract, 0x1b, "i32x4.extract_lane", tI32, 4)
	lane(shReplace, 0x1c, "i32x4.replace_lane", tI32, 4)
	lane(shExtract, 0x1d, "i64x2.extract_lane", tI64, 2)
	lane(shReplace, 0x1e, "i64x2.replace_lane", tI64, 2)
	lane(shExtract, 0x1f, "f32x4.extract_lane", tF32, 4)
	lane(shReplace, 0x20, "f32x4.replace_lane", tF32, 4)
	lane(shExtract, 0x21, "f64x2.extract_lane", tF64, 2)
	lane(shReplace, 0x22, "f64x2.replace_lane", tF64, 2)
	add(shBinary, 0x23, "i8x16.eq", "i8x16.ne", "i8x16.lt_s", "i8x16.lt_u", "i8x16.gt_s", "i8x16.gt_u",
		"i8x16.le_s", "i8x16.le_u", "i8x16.ge_s", "i8x16.ge_u",
		"i16x8.eq", "i16x8.ne", "i16x8.lt_s", "i16x8.lt_u", "i16x8.gt_s", "i16x8.gt_u",
		"i16x8.le_s", "i16x8.le_u", "i16x8.ge_s", "i16x8.ge_u",
		"i32x4.eq", "i32x4.ne", "i32x4.lt_s", "i32x4.lt_u", "i32x4.gt_s", "i32x4.gt_u",
		"i32x4.le_s", "i32x4.le_u", "i32x4.ge_s", "i32x4.ge_u",
		"f32x4.eq", "f32x4.ne", "f32x4.lt", "f32x4.gt", "f32x4.le", "f32x4.ge",
		"f64x2.eq", "f64x2.ne", "f64x2.lt", "f64x2.gt", "f64x2.le", "f64x2.ge")
	add(shUnary, 0x4d, "v128.not")
	add(shBinary, 0x4e, "v128.and", "v128.andnot", "v128.or", "v128.xor")
	add(shTernary, 0x52, "v128.bitselect")
	add(shTest, 0x53, "v128.any_true")
	for i, l := range []byte{16, 8, 4, 2} {
		w := []string{"8", "16", "32", "64"}[i]
		lane(shLoadLane, 0x54+uint32(i), "v128.load"+w+"_lane", 0, l)
		lane(shStoreLane, 0x58+uint32(i), "v128.store"+w+"_lane", 0, l)
	}
	add(shLoad, 0x5c, "v128.load32_zero", "v128.load64_zero")
	add(shUnary, 0x5e, "f32x4.demote_f64x2_zero", "f64x2.promote_low_f32x4",
		"i8x16.abs", "i8x16.neg", "i8x16.popcnt")
	add(shTest, 0x63, "i8x16.all_true", "i8x16.bitmask")
	add(shBinary, 0x65, "i8x16.narrow_i16x8_s", "i8x16.narrow_i16x8_u")
	add(shUnary, 0x67, "f32x4.ceil", "f32x4.floor", "f32x4.trunc", "f32x4.nearest")
	add(shShift, 0x6b, "i8x16.shl", "i8x16.shr_s", "i8x16.shr_u")
	add(shBinary, 0x6e, "i8x16.add", "i8x16.add_sat_s", "i8x16.add_sat_u",
		"i8x16.sub", "i8x16.sub_sat_s", "i8x16.sub_sat_u")
	add(shUnary, 0x74, "f64x2.ceil", "f64x2.floor")
	add(shBinary, 0x76, "i8x16.min_s", "i8x16.min_u", "i8x16.max_s", "i8x16.max_u")
	add(shUnary, 0x7a, "f64x2.trunc")
	add(shBinary, 0x7b, "i8x16.avgr_u")
	add(shUnary, 0x7c, "i16x8.extadd_pairwise_i8x16_s", "i16x8.extadd_pairwise_i8x16_u",
		"i32x4.extadd_pairwise_i16x8_s", "i32x4.extadd_pairwise_i16x8_u",
		"i16x8.abs", "i16x8.neg")
	add(shBinary, 0x82, "i16x8.q15mulr_sat_s")
	add(shTest, 0x83, "i16x8.all_true", "i16x8.bitmask")
	add(shBinary, 0x85, "i16x8.narrow_i32x4_s", "i16x8.narrow_i32x4_u")
	add(shUnary, 0x87, "i16x8.extend_low_i8x16_s", "i16x8.extend_high_i8x16_s",
		"i16x8.extend_low_i8x16_u", "i16x8.extend_high_i8x16_u")
	add(shShift, 0x8b, "i16x8.shl", "i16x8.shr_s", "i16x8.shr_u")
	add(shBinary, 0x8e, "i16x8.add", "i16x8.add_sat_s", "i16x8.add_sat_u",
		"i16x8.sub", "i16x8.sub_sat_s", "i16x8.sub_sat_u")
	add(shUnary, 0x94, "f64x2.nearest")
	add(shBinary, 0x95, "i16x8.mul", "i16x8.min_s", "i16x8.min_u", "i16x8.max_s", "i16x8.max_u")
	add(shBinary, 0x9b, "i16x8.avgr_u", "i16x8.extmul_low_i8x16_s", "i16x8.extmul_high_i8x16_s",
		"i16x8.extmul_low_i8x16_u", "i16x8.extmul_high_i8x16_u")
	add(shUnary, 0xa0, "i32x4.abs", "i32x4.neg")
	add(shTest, 0xa3, "i32x4.all_true", "i32x4.bitmask")
	add(shUnary, 0xa7, "i32x4.extend_low_i16x8_s", "i32x4.extend_high_i16x8_s",
		"i32x4.extend_low_i16x8_u", "i32x4.extend_high_i16x8_u")
	add(shShift, 0xab, "i32x4.shl", "i32x4.shr_s", "i32x4.shr_u")
	add(shBinary, 0xae, "i32x4.add")
	add(shBinary, 0xb1, "i32x4.sub")
	add(shBinary, 0xb5, "i32x4.mul", "i32x4.min_s", "i32x4.min_u", "i32x4.max_s", "i32x4.max_u",
		"i32x4.dot_i16x8_s")
	add(shBinary, 0xbc, "i32x4.extmul_low_i16x8_s", "i32x4.extmul_high_i16x8_s",
		"i32x4.extmul_low_i16x8_u", "i32x4.extmul_high_i16x8_u")
	add(shUnary, 0xc0, "i64x2.abs", "i64x2.neg")
	add(shTest, 0xc3, "i64x2.all_true", "i64x2.bitmask")
	add(shUnary, 0xc7, "i64x2.extend_low_i32x4_s", "i64x2.extend_high_i32x4_s",
		"i64x2.extend_low_i32x4_u", "i64x2.extend_high_i32x4_u")
	add(shShift, 0xcb, "i64x2.shl", "i64x2.shr_s", "i64x2.shr_u")
	add(shBinary, 0xce, "i64x2.add")
	add(shBinary, 0xd1, "i64x2.sub")
	add(shBinary, 0xd5, "i64x2.mul", "i64x2.eq", "i64x2.ne", "i64x2.lt_s", "i64x2.gt_s", "i64x2.le_s", "i64x2.ge_s",
		"i64x2.extmul_low_i32x4_s", "i64x2.extmul_high_i32x4_s", "i64x2.extmul_low_i32x4_u", "i64x2.extmul_high_i32x4_u")
	add(shUnary, 0xe0, "f32x4.abs", "f32x4.neg")
	add(shUnary, 0xe3, "f32x4.sqrt")
	add(shBinary, 0xe4, "f32x4.add", "f32x4.sub", "f32x4.mul", "f32x4.div", "f32x4.min", "f32x4.max",
		"f32x4.pmin", "f32x4.pmax")
	add(shUnary, 0xec, "f64x2.abs", "f64x2.neg")
	add(shUnary, 0xef, "f64x2.sqrt")
	add(shBinary, 0xf0, "f64x2.add", "f64x2.sub", "f64x2.mul", "f64x2.div", "f64x2.min", "f64x2.max",
		"f64x2.pmin", "f64x2.pmax")
	add(shUnary, 0xf8, "i32x4.trunc_sat_f32x4_s", "i32x4.trunc_sat_f32x4_u",
		"f32x4.convert_i32x4_s", "f32x4.convert_i32x4_u",
		"i32x4.trunc_sat_f64x2_s_zero", "i32x4.trunc_sat_f64x2_u_zero",
		"f64x2.convert_low_i32x4_s", "f64x2.convert_low_i32x4_u")
	return ops
}()

// Where the every-instruction module keeps its operands: three v128s,
// then one scalar of each type, then bytes the loads read; each
// instruction's function writes its result to its own 32 bytes from
// simdOut on.
const (
	simdA, simdB, simdC = 0, 16, 32
	simdI32, simdI64    = 48, 56
	simdF32, simdF64    = 64, 72
	simdLoadFrom        = 80
	simdOut             = 1024
)

func memarg(align, offset uint32) []byte { return cat(uleb(uint64(align)), uleb(uint64(offset))) }

func v128Load(addr int32) []byte { return cat(i32Const(addr), simd(0x00, memarg(0, 0))) }

var v128Store = simd(0x0b, memarg(0, 0))

// scalarLoad and scalarStore are the MVP load and store of a value type.
func scalarLoad(t byte) []byte {
	switch t {
	case tI64:
		return cat(i32Const(simdI64), []byte{0x29}, memarg(0, 0))
	case tF32:
		return cat(i32Const(simdF32), []byte{0x2a}, memarg(0, 0))
	case tF64:
		return cat(i32Const(simdF64), []byte{0x2b}, memarg(0, 0))
	}
	return cat(i32Const(simdI32), []byte{0x28}, memarg(0, 0))
}

func scalarStore(t byte) []byte {
	op := map[byte]byte{tI32: 0x36, tI64: 0x37, tF32: 0x38, tF64: 0x39}[t]
	return cat([]byte{op}, memarg(0, 0))
}

// simdCode is the body of a function () -> () that runs o on the operands
// and stores its result at out. Lanes are the last of the shape, and the
// shuffle takes lanes from both ends of both operands, so that an
// immediate read short or long would show.
func simdCode(o simdOp, out int32) []byte {
	a, b, c := v128Load(simdA), v128Load(simdB), v128Load(simdC)
	op := func(imm ...[]byte) []byte { return simd(o.op, imm...) }
	lastLane := []byte{o.lanes - 1}
	var code []byte
	switch o.shape {
	case shLoad:
		code = cat(i32Const(out), i32Const(simdLoadFrom), op(memarg(0, 3)), v128Store)
	case shStore:
		code = cat(i32Const(out), a, op(memarg(0, 0)))
	case shConst:
		code = cat(i32Const(out), op([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xfd}), v128Store)
	case shShuffle:
		code = cat(i32Const(out), a, b, op([]byte{31, 0, 16, 15, 1, 17, 30, 14, 2, 18, 29, 13, 3, 19, 28, 12}), v128Store)
	case shUnary:
		code = cat(i32Const(out), a, op(), v128Store)
	case shBinary:
		code = cat(i32Const(out), a, b, op(), v128Store)
	case shTernary:
		code = cat(i32Const(out), a, b, c, op(), v128Store)
	case shTest:
		code = cat(i32Const(out), a, op(), scalarStore(tI32))
	case shShift:
		code = cat(i32Const(out), a, scalarLoad(tI32), op(), v128Store)
	case shSplat:
		code = cat(i32Const(out), scalarLoad(o.scalar), op(), v128Store)
	case shExtract:
		code = cat(i32Const(out), a, op(lastLane), scalarStore(o.scalar))
	case shReplace:
		code = cat(i32Const(out), a, scalarLoad(o.scalar), op(lastLane), v128Store)
	case shLoadLane:
		code = cat(i32Const(out), i32Const(simdLoadFrom), a, op(memarg(0, 3), lastLane), v128Store)
	case shStoreLane:
		code = cat(i32Const(out), a, op(memarg(0, 0), lastLane))
	default:
		panic(fmt.Sprintf("no code for shape %d", o.shape))
	}
	return code
}

// simdInput is what the every-instruction module's memory starts with:
// bytes that make lanes of every sign, some floats with fractions, and a
// shift count.
func simdInput() []byte {
	in := make([]byte, 256)
	x := uint32(0x9e3779b9)
	for i := range in {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		in[i] = byte(x)
	}
	put32 := func(at int, v uint32) {
		in[at], in[at+1], in[at+2], in[at+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	put32(simdC+0, math.Float32bits(2.5))
	put32(simdC+4, math.Float32bits(-1.75))
	put32(simdI32, 37)
	put32(simdF32, math.Float32bits(-3.25))
	return in
}

// everySIMDModule has one exported function () -> () per instruction of
// ops, named after it, and exports its memory.
func everySIMDModule(ops []simdOp) []byte {
	funcs := make([][]byte, len(ops))
	bodies := make([][]byte, len(ops))
	exports := [][]byte{exportEntry("memory", externMemory, 0)}
	for i, o := range ops {
		funcs[i] = uleb(0)
		bodies[i] = body(nil, simdCode(o, simdOut+32*int32(i)))
		exports = append(exports, exportEntry(o.name, externFunc, uint32(i)))
	}
	return wasmModule(
		vecSec(secType, funcType(nil, nil)),
		vecSec(secFunction, funcs...),
		vecSec(secMemory, []byte{0x00, 0x01}),
		vecSec(secExport, exports...),
		vecSec(secCode, bodies...),
		vecSec(secData, activeData(0, string(simdInput()))),
	)
}

// codeBodies returns the function bodies of bin's code section, each with
// its size, as encoded.
func codeBodies(t testing.TB, bin []byte) [][]byte {
	t.Helper()
	for _, s := range sectionsOf(t, bin) {
		if s.id != secCode {
			continue
		}
		n, k := readUleb(t, s.payload)
		b := s.payload[k:]
		bodies := make([][]byte, n)
		for i := range bodies {
			size, k := readUleb(t, b)
			bodies[i], b = b[:k+int(size)], b[k+int(size):]
		}
		return bodies
	}
	return nil
}

// Every SIMD instruction, with each form of immediate, is decoded and
// copied byte for byte, and the patched module computes what the
// original did.
func TestEverySIMDInstruction(t *testing.T) {
	seen := map[uint32]string{}
	for _, o := range simdOps {
		if prev, dup := seen[o.op]; dup {
			t.Fatalf("the test lists 0xfd %#x twice: %s and %s", o.op, prev, o.name)
		}
		seen[o.op] = o.name
	}
	// 256 sub-opcodes below 0x100, of which the proposal left 20 unassigned.
	if len(simdOps) != 236 {
		t.Fatalf("the test lists %d instructions, want 236", len(simdOps))
	}

	original := everySIMDModule(simdOps)
	patched, stats := mustPatch(t, original)
	if stats.Functions != len(simdOps) || stats.Loops != 0 {
		t.Errorf("Functions, Loops = %d, %d, want %d, 0", stats.Functions, stats.Loops, len(simdOps))
	}
	// Without loops nothing is inserted: the bodies are copied as they
	// were, the added functions after them.
	before, after := codeBodies(t, original), codeBodies(t, patched)
	if len(after) != len(before)+2 {
		t.Fatalf("%d bodies after patching, want %d", len(after), len(before)+2)
	}
	for i := range before {
		if !bytes.Equal(before[i], after[i]) {
			t.Fatalf("%s: body changed:\n% x\n% x", simdOps[i].name, before[i], after[i])
		}
	}

	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			rt := newRuntime(t, e.config)
			want := instantiate(t, rt, original, "original")
			got := instantiate(t, rt, patched, "patched")
			call(t, got, InitDataFunc)
			for _, o := range simdOps {
				call(t, want, o.name)
				call(t, got, o.name)
			}
			wm, gm := want.Memory(), got.Memory()
			if !bytes.Equal(read(t, wm, 0, wm.Size()), read(t, gm, 0, gm.Size())) {
				for i, o := range simdOps {
					at := uint32(simdOut + 32*i)
					if w, g := read(t, wm, at, 32), read(t, gm, at, 32); !bytes.Equal(w, g) {
						t.Errorf("%s: wrote % x, the original % x", o.name, g, w)
					}
				}
				t.Fatal("memory after running every instruction differs from the original's")
			}
			// Something was computed: a result region left all zero
			// everywhere would compare equal and prove nothing.
			if bytes.Equal(read(t, gm, simdOut, 32*uint32(len(simdOps))), make([]byte, 32*len(simdOps))) {
				t.Fatal("no instruction wrote a result")
			}
		})
	}
}

// Each instruction alone decodes to its exact length, and every 0xfd
// sub-opcode that is not one of them is refused: relaxed SIMD as
// unsupported, naming it, the rest as malformed.
func TestSIMDOpcodes(t *testing.T) {
	known := map[uint32]bool{}
	for _, o := range simdOps {
		known[o.op] = true
		code := simdCode(o, 1)
		buf := append(bytes.Clone(code), 0xff)
		r := &reader{buf: buf, end: len(buf)}
		for r.pos < len(code) {
			if err := skipInstruction(r); err != nil {
				t.Fatalf("%s: % x: %v", o.name, code, err)
			}
		}
		if r.pos != len(code) {
			t.Fatalf("%s: % x: decoded %d bytes, want %d", o.name, code, r.pos, len(code))
		}
	}
	for op := uint32(0); op < 0x200; op++ {
		if known[op] {
			continue
		}
		in := wasmModule(
			vecSec(secType, funcType(nil, nil)),
			vecSec(secFunction, uleb(0)),
			vecSec(secCode, body(nil, simd(op))))
		_, _, err := Patch(in)
		want, kind := fmt.Sprintf("unknown opcode 0xfd %#x", op), ErrMalformed
		if op >= 0x100 && op <= 0x113 {
			want, kind = fmt.Sprintf("relaxed SIMD instruction %s (opcode 0xfd %#x) is not supported", relaxedSIMD[op-0x100], op), ErrUnsupported
		}
		if !errors.Is(err, kind) || !strings.Contains(err.Error(), want) {
			t.Errorf("0xfd %#x: %v; want %v saying %q", op, err, kind, want)
		}
	}
	if relaxedSIMD[0x05] != "f32x4.relaxed_madd" || relaxedSIMD[0x12] != "i16x8.relaxed_dot_i8x16_i7x16_s" {
		t.Errorf("relaxed SIMD names out of place: %q", relaxedSIMD)
	}
}

// A lane index out of range is well formed: Patch copies it, as it copies
// an index or an alignment it does not check, and wazero's validator
// refuses the patched module as it refuses the original.
func TestSIMDLaneOutOfRangeLeftToTheValidator(t *testing.T) {
	in := wasmModule(
		vecSec(secType, funcType(nil, []byte{tI32})),
		vecSec(secFunction, uleb(0)),
		vecSec(secCode, body(nil, i32Const(0), simd(0x11), simd(0x1b, []byte{4}))))
	patched, _ := mustPatch(t, in)
	for _, e := range engines() {
		rt := newRuntime(t, e.config)
		for name, bin := range map[string][]byte{"original": in, "patched": patched} {
			if _, err := rt.CompileModule(t.Context(), bin); err == nil {
				t.Errorf("%s: wazero compiled i32x4.extract_lane 4 in the %s module", e.name, name)
			}
		}
	}
}

// simdLoopModule uses v128 wherever a value type goes: a global, locals,
// function parameters and results, a block's result and a block type
// index with a v128 parameter. "spin" adds to a v128 forever; "sum" adds
// n i32s from memory, 4 at a time, each plus 1 from the global.
func simdLoopModule() []byte {
	const (
		acc, i    = 2, 1 // sum's locals
		spinTyp   = 0
		sumTyp    = 1
		addvTyp   = 2
		vToV      = 3
		ones      = 0 // the global
		addvIndex = 2
	)
	data := make([]byte, 1024)
	for k := range 256 {
		v := uint32(3*k + 1)
		data[4*k], data[4*k+1], data[4*k+2], data[4*k+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	i32x4Add, i32x4Neg := simd(0xae), simd(0xa1)
	extract := func(lane byte) []byte { return cat(localGet(acc), simd(0x1b, []byte{lane})) }
	return wasmModule(
		vecSec(secType,
			funcType(nil, nil),
			funcType([]byte{tI32}, []byte{tI32}),
			funcType([]byte{tV128, tV128}, []byte{tV128}),
			funcType([]byte{tV128}, []byte{tV128})),
		vecSec(secFunction, uleb(spinTyp), uleb(sumTyp), uleb(addvTyp)),
		vecSec(secMemory, []byte{0x00, 0x01}),
		vecSec(secGlobal, globalV128(false, 1), global(tI32, true, 4096)),
		vecSec(secExport,
			exportEntry("spin", externFunc, 0),
			exportEntry("sum", externFunc, 1),
			exportEntry("memory", externMemory, 0)),
		vecSec(secCode,
			body([][2]byte{{1, tV128}},
				loop(),
				/**/ localGet(0), globalGet(ones), i32x4Add, localSet(0),
				/**/ br(0),
				end),
			body([][2]byte{{1, tI32}, {1, tV128}},
				v128Const(make([]byte, 16)), localSet(acc),
				block(),
				/**/ loop(),
				/*  */ localGet(i), localGet(0), i32GeS, brIf(1),
				/*  */ localGet(acc),
				/*  */ localGet(i), i32Const(2), []byte{0x74}, simd(0x00, memarg(4, 0)), // v128.load (i<<2)
				/*  */ globalGet(ones), ins(opCall, uleb(addvIndex)),
				/*  */ block(sleb(vToV)...), i32x4Neg, i32x4Neg, end,
				/*  */ i32x4Add, localSet(acc),
				/*  */ localGet(i), i32Const(4), i32Add, localSet(i),
				/*  */ br(0),
				/**/ end,
				end,
				block(tV128), localGet(acc), end, localSet(acc),
				extract(0), extract(1), i32Add, extract(2), i32Add, extract(3), i32Add),
			body(nil, localGet(0), localGet(1), i32x4Add),
		),
		vecSec(secData, activeData(0, string(data))),
	)
}

// A loop of SIMD code gets its check, computes what it did, and stops
// when interrupted; the immutable v128 global is not exported.
func TestSIMDLoops(t *testing.T) {
	original := simdLoopModule()
	patched, stats := mustPatch(t, original)
	if stats.Loops != 2 || stats.ExportedGlobals != 1 {
		t.Errorf("Loops, ExportedGlobals = %d, %d, want 2, 1", stats.Loops, stats.ExportedGlobals)
	}
	if _, ok := exportsOf(t, patched)[GlobalExportPrefix+"0"]; ok {
		t.Errorf("the immutable v128 global was exported")
	}
	sum := func(n uint32) uint32 {
		s := uint32(0)
		for k := uint32(0); k < n; k++ {
			s += 3*k + 1 + 1
		}
		return s
	}
	for _, e := range engines() {
		t.Run(e.name+"/sum", func(t *testing.T) {
			rt := newRuntime(t, e.config)
			want := instantiate(t, rt, original, "original")
			got := instantiate(t, rt, patched, "patched")
			call(t, got, InitDataFunc)
			// Enough calls for the countdown to reach the safepoint a few
			// times in the middle of SIMD code.
			for round := range 300 {
				n := uint32(4 * (round % 65))
				w, g := uint32(call(t, want, "sum", uint64(n))[0]), uint32(call(t, got, "sum", uint64(n))[0])
				if w != sum(n) || g != w {
					t.Fatalf("sum(%d) = %d, the original %d, want %d", n, g, w, sum(n))
				}
			}
		})
		if e.name == "interpreter" && raceEnabled {
			continue // see TestInterruptStopsRunningLoop
		}
		t.Run(e.name+"/spin", func(t *testing.T) { expectInterruptible(t, e, patched, "spin") })
	}
}

// The refusal of mutable v128 globals is of those Patch would export: one
// exported by the module already keeps its name, as a global of another
// type would, and an immutable one is never exported.
func TestV128Globals(t *testing.T) {
	exported := wasmModule(
		vecSec(secGlobal, globalV128(true, 7), globalV128(false, 8)),
		vecSec(secExport, exportEntry("vec", externGlobal, 0)))
	patched, stats := mustPatch(t, exported)
	if stats.ExportedGlobals != 0 {
		t.Errorf("ExportedGlobals = %d, want 0", stats.ExportedGlobals)
	}
	for _, e := range engines() {
		mod := instantiate(t, newRuntime(t, e.config), patched, "")
		if g := mod.ExportedGlobal("vec"); g == nil || g.Type() != 0x7b {
			t.Errorf("%s: the v128 global vec is not exported as it was: %v", e.name, g)
		}
	}
	imported := wasmModule(vecSec(secImport, cat(str("env"), str("v"), []byte{externGlobal, tV128, 0x01})))
	if _, _, err := Patch(imported); err != nil {
		t.Errorf("an imported mutable v128 global: %v", err)
	}
	_, _, err := Patch(wasmModule(
		vecSec(secImport, cat(str("env"), str("v"), []byte{externGlobal, tV128, 0x01})),
		vecSec(secGlobal, global(tI32, true, 0), globalV128(true, 1))))
	var fe *formatError
	if !errors.As(err, &fe) || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "global 2 is a mutable v128") {
		t.Fatalf("a defined mutable v128 global after an imported one: %v", err)
	}
}

// testdata/simd.wasm is what clang makes of testdata/simd.c with
// -msimd128 -O2 (see there): loops clang vectorised, and intrinsics for
// the immediates it does not use on its own.
func TestPatchClangSIMDModule(t *testing.T) {
	original, err := os.ReadFile("testdata/simd.wasm")
	if err != nil {
		t.Fatal(err)
	}
	if n := simdInstructions(t, original); n < 100 {
		t.Fatalf("testdata/simd.wasm has %d SIMD instructions; it was not built with -msimd128", n)
	}
	patched, stats := mustPatch(t, original)
	if stats.Loops < 4 {
		t.Errorf("Loops = %d, want at least 4", stats.Loops)
	}
	if n, m := simdInstructions(t, patched), simdInstructions(t, original); n != m {
		t.Errorf("%d SIMD instructions after patching, %d before", n, m)
	}
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			rt := newRuntime(t, e.config)
			want := instantiate(t, rt, original, "original")
			got := instantiate(t, rt, patched, "patched")
			call(t, got, InitDataFunc)
			same := func(name string, params ...uint64) {
				t.Helper()
				if w, g := call(t, want, name, params...), call(t, got, name, params...); !slices.Equal(w, g) {
					t.Fatalf("%s%v = %v, the original %v", name, params, g, w)
				}
			}
			for _, n := range []uint64{0, 5, 1024} {
				same("fill", n)
				for _, k := range []uint64{0, 3, 1000, 1<<32 - 1} {
					same("intrinsics", k)
				}
				for _, m := range []uint64{0, 7, 64, 1021} {
					same("saxpy_sum", uint64(api.EncodeF32(0.75)), m)
					same("byte_hist", m*4)
				}
			}
			wm, gm := want.Memory(), got.Memory()
			if !bytes.Equal(read(t, wm, 0, wm.Size()), read(t, gm, 0, gm.Size())) {
				t.Fatal("memory differs from the original's")
			}
		})
	}
}

// simdInstructions counts the 0xfd instructions of bin's function bodies.
func simdInstructions(t testing.TB, bin []byte) int {
	t.Helper()
	n := 0
	for _, b := range codeBodies(t, bin) {
		_, k := readUleb(t, b)
		r := &reader{buf: b, pos: k, end: len(b)}
		groups, _ := r.u32("")
		for range groups {
			_ = r.skipU32("")
			_, _ = r.byte("")
		}
		for r.remaining() > 0 {
			if r.buf[r.pos] == opPrefixSIMD {
				n++
			}
			if err := skipInstruction(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	return n
}

// Check reads SIMD modules, linked and patched, as it reads others, and
// still refuses what the host does not provide.
func TestCheckSIMDModule(t *testing.T) {
	module := func(imports ...[]byte) []byte {
		exports := [][]byte{exportEntry("memory", externMemory, 0)}
		for _, name := range RequiredExports[1:] {
			exports = append(exports, exportEntry(name, externFunc, 1))
		}
		return wasmModule(
			vecSec(secType, funcType([]byte{tI32, tI32}, []byte{tI32}), funcType(nil, nil), funcType([]byte{tV128}, []byte{tV128})),
			vecSec(secImport, append([][]byte{cat(str("wasi_snapshot_preview1"), str("fd_write"), []byte{externFunc}, uleb(0))}, imports...)...),
			vecSec(secFunction, uleb(1), uleb(2)),
			vecSec(secMemory, []byte{0x00, 0x01}),
			vecSec(secGlobal, globalV128(false, 3)),
			vecSec(secExport, exports...),
			vecSec(secCode,
				body([][2]byte{{2, tV128}}, loop(), globalGet(0), ins(opCall, uleb(2)), ins(opDrop), end),
				body(nil, localGet(0), simd(0xe1), v128Const(make([]byte, 16)), simd(0x0d, make([]byte, 16)))),
			vecSec(secData, activeData(16, "data")),
		)
	}
	linked := module()
	if _, err := Check(linked); err != nil {
		t.Fatalf("the linked module: %v", err)
	}
	patched, _ := mustPatch(t, linked)
	if _, err := Check(patched, InitDataFunc); err != nil {
		t.Fatalf("the patched module: %v", err)
	}
	withGlobal := module(cat(str("env"), str("vec"), []byte{externGlobal, tV128, 0x00}))
	if _, err := Check(withGlobal); !errors.Is(err, ErrHostInterface) || !strings.Contains(err.Error(), "[env.vec]") {
		t.Fatalf("a v128 global import: %v; want ErrHostInterface naming env.vec", err)
	}
	for _, e := range engines() {
		if _, err := newRuntime(t, e.config).CompileModule(t.Context(), patched); err != nil {
			t.Errorf("%s: the patched module does not compile: %v", e.name, err)
		}
	}
}

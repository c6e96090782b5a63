package wasmpatch

// A tiny WebAssembly binary encoder, enough to write the test modules by
// hand: CI has no wat2wasm. Its LEB128 encoders are written apart from the
// package's so that a bug in one is not hidden by the same bug in the other.

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/tetratelabs/wazero"
)

// Value types.
const (
	tI32     = 0x7f
	tI64     = 0x7e
	tV128    = 0x7b
	tFuncref = 0x70
)

func uleb(v uint64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func sleb(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7 // arithmetic shift keeps the sign
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func vec(items ...[]byte) []byte { return cat(uleb(uint64(len(items))), cat(items...)) }

func str(s string) []byte { return cat(uleb(uint64(len(s))), []byte(s)) }

func rawSection(id byte, payload []byte) []byte {
	return cat([]byte{id}, uleb(uint64(len(payload))), payload)
}

func vecSec(id byte, items ...[]byte) []byte { return rawSection(id, vec(items...)) }

func customSec(name string, content []byte) []byte {
	return rawSection(secCustom, cat(str(name), content))
}

func wasmModule(sections ...[]byte) []byte {
	return cat([]byte("\x00asm\x01\x00\x00\x00"), cat(sections...))
}

func funcType(params, results []byte) []byte {
	return cat([]byte{0x60}, vec(bytesOf(params)...), vec(bytesOf(results)...))
}

// bytesOf splits b into one-byte items, for vectors of value types.
func bytesOf(b []byte) [][]byte {
	items := make([][]byte, len(b))
	for i := range b {
		items[i] = b[i : i+1]
	}
	return items
}

func exportEntry(name string, kind byte, idx uint32) []byte {
	return cat(str(name), []byte{kind}, uleb(uint64(idx)))
}

// global is a global section entry with an i32.const or i64.const init.
func global(typ byte, mutable bool, init int64) []byte {
	mut := byte(0)
	if mutable {
		mut = 1
	}
	op := byte(opI32Const)
	if typ == tI64 {
		op = opI64Const
	}
	return cat([]byte{typ, mut, op}, sleb(init), []byte{opEnd})
}

// globalV128 is a global section entry of type v128 with a v128.const
// init whose four i32 lanes are all lane.
func globalV128(mutable bool, lane uint32) []byte {
	mut := byte(0)
	if mutable {
		mut = 1
	}
	var c []byte
	for range 4 {
		c = append(c, byte(lane), byte(lane>>8), byte(lane>>16), byte(lane>>24))
	}
	return cat([]byte{tV128, mut}, v128Const(c), []byte{opEnd})
}

// activeData is a data segment for memory 0 at a constant offset.
func activeData(offset int32, data string) []byte {
	return cat([]byte{0x00, opI32Const}, sleb(int64(offset)), []byte{opEnd}, str(data))
}

func passiveData(data string) []byte { return cat([]byte{0x01}, str(data)) }

// body is a code section entry: locals given as (count, type) pairs, then
// the instructions, then the end of the function.
func body(locals [][2]byte, instrs ...[]byte) []byte {
	decls := make([][]byte, len(locals))
	for i, l := range locals {
		decls[i] = cat(uleb(uint64(l[0])), []byte{l[1]})
	}
	b := cat(vec(decls...), cat(instrs...), []byte{opEnd})
	return cat(uleb(uint64(len(b))), b)
}

// Instructions.
func ins(op byte, imm ...[]byte) []byte { return cat([]byte{op}, cat(imm...)) }
func i32Const(v int32) []byte           { return ins(opI32Const, sleb(int64(v))) }
func localGet(i uint32) []byte          { return ins(0x20, uleb(uint64(i))) }
func localSet(i uint32) []byte          { return ins(0x21, uleb(uint64(i))) }
func localTee(i uint32) []byte          { return ins(0x22, uleb(uint64(i))) }
func globalGet(i uint32) []byte         { return ins(opGlobalGet, uleb(uint64(i))) }
func globalSet(i uint32) []byte         { return ins(0x24, uleb(uint64(i))) }
func br(l uint32) []byte                { return ins(0x0c, uleb(uint64(l))) }
func brIf(l uint32) []byte              { return ins(0x0d, uleb(uint64(l))) }
func block(bt ...byte) []byte           { return blockOp(opBlock, bt) }
func loop(bt ...byte) []byte            { return blockOp(opLoop, bt) }
func ifOp(bt ...byte) []byte            { return blockOp(opIf, bt) }

// blockOp opens a block with no type when bt is empty, else with bt as
// the already encoded block type (a value type or an s33 type index).
func blockOp(op byte, bt []byte) []byte {
	if len(bt) == 0 {
		return []byte{op, blockTypeEmpty}
	}
	return cat([]byte{op}, bt)
}

func brTable(def uint32, labels ...uint32) []byte {
	items := make([][]byte, len(labels))
	for i, l := range labels {
		items[i] = uleb(uint64(l))
	}
	return cat([]byte{opBrTable}, vec(items...), uleb(uint64(def)))
}

// simd is the instruction 0xfd op with its immediates.
func simd(op uint32, imm ...[]byte) []byte {
	return cat([]byte{opPrefixSIMD}, uleb(uint64(op)), cat(imm...))
}

func v128Const(b []byte) []byte {
	if len(b) != 16 {
		panic("v128.const takes 16 bytes")
	}
	return simd(0x0c, b)
}

func callIndirect(typ, table uint32) []byte {
	return cat([]byte{opCallIndirect}, uleb(uint64(typ)), uleb(uint64(table)))
}

var (
	end     = []byte{opEnd}
	elseOp  = []byte{opElse}
	ret     = []byte{0x0f}
	i32Eqz  = []byte{0x45}
	i32LtU  = []byte{0x49}
	i32GtS  = []byte{0x4a}
	i32GeS  = []byte{0x4e}
	i32Add  = []byte{0x6a}
	i32Sub  = []byte{0x6b}
	i32Mul  = []byte{0x6c}
	i32Xor  = []byte{0x73}
	i32Rotl = []byte{0x77}
)

type engine struct {
	name   string
	config wazero.RuntimeConfig
}

// engines are the wazero engines the behaviour tests run on: the
// interpreter everywhere, and the compiler where wazero has one.
func engines() []engine {
	e := []engine{{"interpreter", wazero.NewRuntimeConfigInterpreter()}}
	if runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" {
		e = append(e, engine{"compiler", wazero.NewRuntimeConfigCompiler()})
	}
	return e
}

// testSection is a section of a module as the tests see it, decoded
// independently of the package.
type testSection struct {
	id      byte
	name    string // custom sections
	payload []byte
}

func (s testSection) String() string {
	if s.id == secCustom {
		return fmt.Sprintf("custom %q", s.name)
	}
	return sectionNames[s.id]
}

func sectionsOf(t testing.TB, bin []byte) []testSection {
	t.Helper()
	var out []testSection
	b := bin[8:]
	for len(b) > 0 {
		id := b[0]
		size, n := readUleb(t, b[1:])
		b = b[1+n:]
		s := testSection{id: id, payload: b[:size]}
		if id == secCustom {
			l, n := readUleb(t, s.payload)
			s.name = string(s.payload[n : n+int(l)])
		}
		out = append(out, s)
		b = b[size:]
	}
	return out
}

func readUleb(t testing.TB, b []byte) (uint64, int) {
	t.Helper()
	var v uint64
	for i, c := range b {
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, i + 1
		}
	}
	t.Fatalf("bad LEB128 % x", b)
	return 0, 0
}

type testExport struct {
	kind  byte
	index uint32
}

// exportsOf decodes the export section of bin.
func exportsOf(t testing.TB, bin []byte) map[string]testExport {
	t.Helper()
	exports := map[string]testExport{}
	for _, s := range sectionsOf(t, bin) {
		if s.id != secExport {
			continue
		}
		b := s.payload
		n, k := readUleb(t, b)
		b = b[k:]
		for range n {
			l, k := readUleb(t, b)
			name := string(b[k : k+int(l)])
			b = b[k+int(l):]
			kind := b[0]
			idx, k := readUleb(t, b[1:])
			b = b[1+k:]
			exports[name] = testExport{kind, uint32(idx)}
		}
	}
	return exports
}

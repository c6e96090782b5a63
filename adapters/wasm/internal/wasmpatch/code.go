package wasmpatch

// Opcodes the rewrite reads or writes by name. The rest are known only by
// the shape of their immediates, in the immediates table below.
const (
	opUnreachable  = 0x00
	opBlock        = 0x02
	opLoop         = 0x03
	opIf           = 0x04
	opElse         = 0x05
	opEnd          = 0x0b
	opBrTable      = 0x0e
	opCallIndirect = 0x11
	opSelectTyped  = 0x1c
	opCall         = 0x10
	opDrop         = 0x1a
	opLocalGet     = 0x20
	opGlobalGet    = 0x23
	opGlobalSet    = 0x24
	opMemoryGrow   = 0x40
	opI32Eqz       = 0x45
	opI32Sub       = 0x6b
	opI32Const     = 0x41
	opI64Const     = 0x42
	opF32Const     = 0x43
	opF64Const     = 0x44
	opRefNull      = 0xd0
	opRefFunc      = 0xd2
	opPrefixMisc   = 0xfc // saturating truncation, bulk memory, table ops
	opPrefixSIMD   = 0xfd
	opPrefixAtomic = 0xfe

	miscMemoryInit = 0x08
	miscDataDrop   = 0x09

	blockTypeEmpty = 0x40
)

// immediate is the shape of what follows an opcode. Decoding needs no more
// than this: the rewrite copies every instruction byte for byte and only
// has to know where each one ends and where blocks open and close.
type immediate uint8

const (
	immInvalid    immediate = iota // not an opcode of the supported feature set
	immNone                        // e.g. i32.add, drop, return
	immBlockType                   // block, loop, if
	immU32                         // an index: br, call, local.get, global.get, ...
	immU32Pair                     // call_indirect (type, table)
	immBrTable                     // vec(label) label
	immMemArg                      // loads and stores: align, offset
	immI32                         // i32.const
	immI64                         // i64.const
	immF32                         // f32.const
	immF64                         // f64.const
	immSelectT                     // select with its value types
	immRefType                     // ref.null
	immPrefixMisc                  // 0xfc, then a u32 sub-opcode
	immPrefixSIMD                  // 0xfd, then a u32 sub-opcode
	immMemArgLane                  // v128.load*_lane, v128.store*_lane: memarg, then a lane index
	immLane                        // extract_lane, replace_lane: a lane index
	immBytes16                     // v128.const, i8x16.shuffle: 16 bytes
)

// immediates maps each one-byte opcode of MVP, sign extension, reference
// types and bulk memory to the shape of its immediates.
var immediates = func() (t [256]immediate) {
	set := func(from, to byte, imm immediate) {
		for op := int(from); op <= int(to); op++ {
			t[op] = imm
		}
	}
	set(0x00, 0x01, immNone)      // unreachable, nop
	set(0x02, 0x04, immBlockType) // block, loop, if
	set(0x05, 0x05, immNone)      // else
	set(0x0b, 0x0b, immNone)      // end
	set(0x0c, 0x0d, immU32)       // br, br_if
	set(0x0e, 0x0e, immBrTable)
	set(0x0f, 0x0f, immNone)       // return
	set(0x10, 0x10, immU32)        // call
	set(0x11, 0x11, immU32Pair)    // call_indirect
	set(0x1a, 0x1b, immNone)       // drop, select
	set(0x1c, 0x1c, immSelectT)    // select t*
	set(0x20, 0x24, immU32)        // local.get/set/tee, global.get/set
	set(0x25, 0x26, immU32)        // table.get, table.set
	set(0x28, 0x3e, immMemArg)     // loads and stores
	set(0x3f, 0x40, immU32)        // memory.size, memory.grow (memory index)
	set(0x41, 0x41, immI32)        // i32.const
	set(0x42, 0x42, immI64)        // i64.const
	set(0x43, 0x43, immF32)        // f32.const
	set(0x44, 0x44, immF64)        // f64.const
	set(0x45, 0xc4, immNone)       // numeric, conversions, sign extension
	set(0xd0, 0xd0, immRefType)    // ref.null
	set(0xd1, 0xd1, immNone)       // ref.is_null
	set(0xd2, 0xd2, immU32)        // ref.func
	set(0xfc, 0xfc, immPrefixMisc) // see miscImmediates
	set(0xfd, 0xfd, immPrefixSIMD) // see simdImmediates
	return t
}()

// miscImmediates maps the 0xfc sub-opcodes: non-trapping float-to-int
// (0-7), bulk memory (8-11) and table operations (12-17).
var miscImmediates = [...]immediate{
	0x00: immNone, 0x01: immNone, 0x02: immNone, 0x03: immNone, // i32.trunc_sat_*
	0x04: immNone, 0x05: immNone, 0x06: immNone, 0x07: immNone, // i64.trunc_sat_*
	0x08: immU32Pair, // memory.init data, memory
	0x09: immU32,     // data.drop
	0x0a: immU32Pair, // memory.copy dst, src
	0x0b: immU32,     // memory.fill
	0x0c: immU32Pair, // table.init elem, table
	0x0d: immU32,     // elem.drop
	0x0e: immU32Pair, // table.copy dst, src
	0x0f: immU32,     // table.grow
	0x10: immU32,     // table.size
	0x11: immU32,     // table.fill
}

// simdImmediates maps the 0xfd sub-opcodes of fixed-width SIMD
// (WebAssembly 2.0), all below 0x100, to the shape of their immediates.
// The sub-opcodes the proposal left unassigned stay immInvalid. The lane
// indices are read as the single bytes they are; whether one is in range
// for its shape is for the validator, like an index or an alignment.
var simdImmediates = func() (t [0x100]immediate) {
	set := func(from, to byte, imm immediate) {
		for op := int(from); op <= int(to); op++ {
			t[op] = imm
		}
	}
	set(0x00, 0x0b, immMemArg)     // v128.load, load8x8_s ... load64_splat, v128.store
	set(0x0c, 0x0d, immBytes16)    // v128.const, i8x16.shuffle
	set(0x0e, 0x14, immNone)       // i8x16.swizzle, splats
	set(0x15, 0x22, immLane)       // extract_lane, replace_lane
	set(0x23, 0x53, immNone)       // comparisons, bitwise, v128.any_true
	set(0x54, 0x5b, immMemArgLane) // v128.load8_lane ... v128.store64_lane
	set(0x5c, 0x5d, immMemArg)     // v128.load32_zero, v128.load64_zero
	set(0x5e, 0xff, immNone)       // arithmetic and conversions, holes below
	for _, hole := range []byte{0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4, 0xbb,
		0xc2, 0xc5, 0xc6, 0xcf, 0xd0, 0xd2, 0xd3, 0xd4, 0xe2, 0xee} {
		t[hole] = immInvalid
	}
	return t
}()

// simdV128Const is the 0xfd sub-opcode of v128.const, the one SIMD
// instruction allowed in a constant expression.
const simdV128Const = 0x0c

// relaxedSIMD names the 0xfd sub-opcodes from 0x100 on: the relaxed SIMD
// proposal, whose results may differ between hosts and which wazero does
// not implement, refused by name.
var relaxedSIMD = [...]string{
	"i8x16.relaxed_swizzle",
	"i32x4.relaxed_trunc_f32x4_s",
	"i32x4.relaxed_trunc_f32x4_u",
	"i32x4.relaxed_trunc_f64x2_s_zero",
	"i32x4.relaxed_trunc_f64x2_u_zero",
	"f32x4.relaxed_madd",
	"f32x4.relaxed_nmadd",
	"f64x2.relaxed_madd",
	"f64x2.relaxed_nmadd",
	"i8x16.relaxed_laneselect",
	"i16x8.relaxed_laneselect",
	"i32x4.relaxed_laneselect",
	"i64x2.relaxed_laneselect",
	"f32x4.relaxed_min",
	"f32x4.relaxed_max",
	"f64x2.relaxed_min",
	"f64x2.relaxed_max",
	"i16x8.relaxed_q15mulr_s",
	"i16x8.relaxed_dot_i8x16_i7x16_s",
	"i32x4.relaxed_dot_i8x16_i7x16_add_s",
}

// unsupportedOpcodes names the proposals whose opcodes are recognised
// only to be refused with a clear message.
var unsupportedOpcodes = map[byte]string{
	0x06:           "exception handling (try)",
	0x07:           "exception handling (catch)",
	0x08:           "exception handling (throw)",
	0x09:           "exception handling (rethrow)",
	0x0a:           "exception handling (throw_ref)",
	0x12:           "tail calls (return_call)",
	0x13:           "tail calls (return_call_indirect)",
	0x14:           "function references (call_ref)",
	0x18:           "exception handling (delegate)",
	0x19:           "exception handling (catch_all)",
	opPrefixAtomic: "threads (atomics)",
}

// loopCheck returns the instructions put at the top of every loop body:
//
//	global.get $budget
//	i32.const 1
//	i32.sub
//	global.set $budget
//	global.get $budget
//	i32.eqz
//	if
//	  call $safepoint
//	end
//
// A countdown in a global and a branch the CPU predicts as not taken:
// every SafepointInterval loop iterations, across all loops, the code
// calls the safepoint, which is where the host can stop it.
func loopCheck(budgetGlobal, safepointFunc uint32) []byte {
	b := appendU32([]byte{opGlobalGet}, budgetGlobal)
	b = append(b, opI32Const, 1, opI32Sub, opGlobalSet)
	b = appendU32(b, budgetGlobal)
	b = appendU32(append(b, opGlobalGet), budgetGlobal)
	b = append(b, opI32Eqz, opIf, blockTypeEmpty, opCall)
	b = appendU32(b, safepointFunc)
	return append(b, opEnd)
}

// safepointBody is the body of the safepoint function:
//
//	i32.const SafepointInterval
//	global.set $budget
//	i32.const 0
//	memory.grow 0
//	drop
//	global.get $interrupt
//	if
//	  unreachable
//	end
//
// wazero runs memory.grow in Go: compiled code cannot be preempted by the
// Go runtime, so without this exit a spinning loop would hold off every
// stop-the-world (a garbage collection) of the process, and with it the
// goroutine that sets the interrupt. Growing by 0 pages changes nothing.
func safepointBody(budgetGlobal, interruptGlobal uint32) []byte {
	b := []byte{0x00, opI32Const} // no locals
	b = appendS32(b, SafepointInterval)
	b = appendU32(append(b, opGlobalSet), budgetGlobal)
	b = append(b, opI32Const, 0, opMemoryGrow, 0x00, opDrop)
	b = appendU32(append(b, opGlobalGet), interruptGlobal)
	return append(b, opIf, blockTypeEmpty, opUnreachable, opEnd, opEnd)
}

// rewriteBody decodes one function body (without its size prefix) from r
// and appends it to out with check inserted right after the block type of
// every loop. The locals are copied unchanged. It returns the number of
// loops instrumented.
func rewriteBody(r *reader, out, check []byte) ([]byte, int, error) {
	// Copy in runs: everything between two insertion points, the locals
	// included, goes out in one append.
	copied := r.pos
	copyUpTo := func(pos int) {
		out = append(out, r.buf[copied:pos]...)
		copied = pos
	}

	groups, err := r.u32("local declaration count")
	if err != nil {
		return out, 0, err
	}
	var locals uint64
	for i := uint32(0); i < groups; i++ {
		n, err := r.u32("local count")
		if err != nil {
			return out, 0, err
		}
		if locals += uint64(n); locals > 1<<32-1 {
			return out, 0, r.malformed("too many locals")
		}
		if err := readValType(r, "local type"); err != nil {
			return out, 0, err
		}
	}

	loops := 0
	depth := 1 // the function body is itself a block, closed by the last end
	for depth > 0 {
		if r.remaining() == 0 {
			return out, loops, r.malformed("function body ends inside %d unclosed block(s)", depth)
		}
		op := r.buf[r.pos]
		switch op {
		case opBlock, opLoop, opIf:
			depth++
		case opEnd:
			depth--
		}
		if err := skipInstruction(r); err != nil {
			return out, loops, err
		}
		if op == opLoop {
			copyUpTo(r.pos)
			out = append(out, check...)
			loops++
		}
	}
	if err := r.done("function body after its final end"); err != nil {
		return out, loops, err
	}
	copyUpTo(r.pos)
	return out, loops, nil
}

// skipInstruction decodes one instruction at r.pos and moves past it.
func skipInstruction(r *reader) error {
	at := r.pos
	op, err := r.byte("opcode")
	if err != nil {
		return err
	}
	imm := immediates[op]
	if imm == immInvalid {
		r.pos = at
		if feature, ok := unsupportedOpcodes[op]; ok {
			if op == opPrefixAtomic {
				// Name the whole opcode when its sub-opcode is readable.
				sub := &reader{buf: r.buf, pos: at + 1, end: r.end}
				if n, err := sub.u32("sub-opcode"); err == nil {
					return r.errorf(ErrUnsupported, "%s instruction (opcode %#x %#x) is not supported", feature, op, n)
				}
			}
			return r.errorf(ErrUnsupported, "%s instruction (opcode %#x) is not supported", feature, op)
		}
		return r.malformed("unknown opcode %#x", op)
	}
	if imm == immPrefixMisc {
		sub, err := r.u32("0xfc sub-opcode")
		if err != nil {
			return err
		}
		if uint64(sub) >= uint64(len(miscImmediates)) {
			r.pos = at
			return r.malformed("unknown opcode 0xfc %#x", sub)
		}
		imm = miscImmediates[sub]
	}
	if imm == immPrefixSIMD {
		if imm, err = simdImmediate(r, at); err != nil {
			return err
		}
	}
	return skipImmediate(r, imm)
}

// simdImmediate reads the sub-opcode of the 0xfd instruction at at and
// returns the shape of its immediates.
func simdImmediate(r *reader, at int) (immediate, error) {
	sub, err := r.u32("0xfd sub-opcode")
	if err != nil {
		return immInvalid, err
	}
	if sub < uint32(len(simdImmediates)) && simdImmediates[sub] != immInvalid {
		return simdImmediates[sub], nil
	}
	r.pos = at
	if sub >= 0x100 && sub-0x100 < uint32(len(relaxedSIMD)) {
		return immInvalid, r.errorf(ErrUnsupported, "relaxed SIMD instruction %s (opcode 0xfd %#x) is not supported",
			relaxedSIMD[sub-0x100], sub)
	}
	return immInvalid, r.malformed("unknown opcode 0xfd %#x", sub)
}

func skipImmediate(r *reader, imm immediate) error {
	switch imm {
	case immNone:
		return nil
	case immBlockType:
		return readBlockType(r)
	case immU32:
		return r.skipU32("index")
	case immU32Pair:
		if err := r.skipU32("index"); err != nil {
			return err
		}
		return r.skipU32("index")
	case immBrTable:
		n, err := r.u32("br_table label count")
		if err != nil {
			return err
		}
		// n+1 labels, the last being the default.
		for i := uint64(0); i <= uint64(n); i++ {
			if err := r.skipU32("br_table label"); err != nil {
				return err
			}
		}
		return nil
	case immMemArg:
		return skipMemArg(r)
	case immMemArgLane:
		if err := skipMemArg(r); err != nil {
			return err
		}
		_, err := r.byte("lane index")
		return err
	case immLane:
		_, err := r.byte("lane index")
		return err
	case immBytes16:
		_, err := r.bytes(16, "16-byte immediate")
		return err
	case immI32:
		return r.skipSigned(32, "i32.const")
	case immI64:
		return r.skipSigned(64, "i64.const")
	case immF32:
		_, err := r.bytes(4, "f32.const")
		return err
	case immF64:
		_, err := r.bytes(8, "f64.const")
		return err
	case immSelectT:
		n, err := r.u32("select type count")
		if err != nil {
			return err
		}
		for i := uint32(0); i < n; i++ {
			if err := readValType(r, "select type"); err != nil {
				return err
			}
		}
		return nil
	case immRefType:
		return readRefType(r, "ref.null type")
	}
	return r.malformed("internal: no decoder for immediate kind %d", imm)
}

func skipMemArg(r *reader) error {
	align, err := r.u32("memarg alignment")
	if err != nil {
		return err
	}
	if align&0x40 != 0 {
		// Multi-memory encodes a memory index after a flagged alignment.
		if err := r.skipU32("memarg memory index"); err != nil {
			return err
		}
	}
	return r.skipU32("memarg offset")
}

// readBlockType decodes a block type: empty (0x40), one value type, or a
// type index as a non-negative s33 (multi-value).
func readBlockType(r *reader) error {
	at := r.pos
	v, err := r.signed(33, "block type")
	if err != nil {
		return err
	}
	if v >= 0 {
		return nil // a type index; the validator checks its range
	}
	if r.pos-at == 1 && (r.buf[at] == blockTypeEmpty || isValType(r.buf[at])) {
		return nil
	}
	r.pos = at
	return r.malformed("invalid block type %#x", r.buf[at])
}

func isValType(b byte) bool {
	switch b {
	case 0x7f, 0x7e, 0x7d, 0x7c: // i32, i64, f32, f64
		return true
	case valV128:
		return true
	}
	return isRefType(b)
}

func isRefType(b byte) bool { return b == 0x70 || b == 0x6f } // funcref, externref

func readValType(r *reader, what string) error {
	b, err := r.byte(what)
	if err != nil {
		return err
	}
	if !isValType(b) {
		r.pos--
		return r.malformed("invalid %s %#x", what, b)
	}
	return nil
}

func readRefType(r *reader, what string) error {
	b, err := r.byte(what)
	if err != nil {
		return err
	}
	if !isRefType(b) {
		r.pos--
		return r.malformed("invalid %s %#x", what, b)
	}
	return nil
}

// constOpcodes are the instructions allowed in constant expressions
// (global initialisers, segment offsets), extended-const included.
var constOpcodes = map[byte]string{
	opI32Const:   "i32.const",
	opI64Const:   "i64.const",
	opF32Const:   "f32.const",
	opF64Const:   "f64.const",
	opGlobalGet:  "global.get",
	opRefNull:    "ref.null",
	opRefFunc:    "ref.func",
	opPrefixSIMD: "v128.const", // the only 0xfd instruction allowed
	0x6a:         "i32.add",
	0x6b:         "i32.sub",
	0x6c:         "i32.mul",
	0x7c:         "i64.add",
	0x7d:         "i64.sub",
	0x7e:         "i64.mul",
}

// skipConstExpr moves past a constant expression and its end, returning
// the opcodes it was made of so that a caller can tell its form.
func skipConstExpr(r *reader) ([]byte, error) {
	var ops []byte
	for {
		at := r.pos
		op, err := r.byte("constant expression")
		if err != nil {
			return nil, err
		}
		if op == opEnd {
			return ops, nil
		}
		if _, ok := constOpcodes[op]; !ok {
			r.pos = at
			return nil, r.malformed("opcode %#x is not allowed in a constant expression", op)
		}
		imm := immediates[op]
		if op == opPrefixSIMD {
			sub, err := r.u32("0xfd sub-opcode")
			if err != nil {
				return nil, err
			}
			if sub != simdV128Const {
				r.pos = at
				return nil, r.malformed("opcode 0xfd %#x is not allowed in a constant expression", sub)
			}
			imm = immBytes16
		}
		if err := skipImmediate(r, imm); err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
}

package wasmpatch

// The hand-written modules the tests patch and run.

// spinModule has two functions of type () -> () that never return: a bare
// infinite loop, and a C-like one whose counted inner loop always ends but
// whose outer loop does not.
func spinModule() []byte {
	return wasmModule(
		vecSec(secType, funcType(nil, nil)),
		vecSec(secFunction, uleb(0), uleb(0)),
		vecSec(secExport,
			exportEntry("spin", externFunc, 0),
			exportEntry("spin_nested", externFunc, 1)),
		vecSec(secCode,
			body(nil, loop(), br(0), end),
			body([][2]byte{{1, tI32}},
				loop(),
				/**/ i32Const(0), localSet(0),
				/**/ loop(),
				/*  */ localGet(0), i32Const(1), i32Add, localTee(0),
				/*  */ i32Const(1000), i32LtU, brIf(0),
				/**/ end,
				/**/ br(0),
				end),
		),
	)
}

// twoSegmentModule is a memory with two active data segments and nothing
// else: no types, no functions, so Patch has to add those sections.
func twoSegmentModule() []byte {
	return wasmModule(
		vecSec(secMemory, []byte{0x00, 0x01}), // min 1 page
		vecSec(secExport, exportEntry("memory", externMemory, 0)),
		vecSec(secData,
			activeData(16, "hello, world"),
			activeData(1000, "\xde\xad\xbe\xef\x00\x01"),
		),
	)
}

// mixedSegmentModule has a passive segment between two active ones and a
// DataCount section already, and a function that copies the passive
// segment by its index: indices must survive the patch.
func mixedSegmentModule() []byte {
	return wasmModule(
		vecSec(secType, funcType(nil, nil)),
		vecSec(secFunction, uleb(0)),
		vecSec(secMemory, []byte{0x00, 0x01}),
		vecSec(secExport,
			exportEntry("memory", externMemory, 0),
			exportEntry("copy_passive", externFunc, 0)),
		rawSection(secDataCount, uleb(3)),
		vecSec(secCode,
			body(nil,
				i32Const(2000), i32Const(0), i32Const(8),
				[]byte{opPrefixMisc, miscMemoryInit, 0x01, 0x00},
				[]byte{opPrefixMisc, miscDataDrop, 0x01}),
		),
		vecSec(secData,
			activeData(16, "first"),
			passiveData("passive!"),
			activeData(14, "third"), // overlaps the first: later segments win
		),
		customSec("name", []byte{}),
	)
}

// providerModule exports an immutable global "g" = 99, for globalsModule
// to import.
func providerModule() []byte {
	return wasmModule(
		vecSec(secGlobal, global(tI32, false, 99)),
		vecSec(secExport, exportEntry("g", externGlobal, 0)),
	)
}

// globalsModule imports one global (index 0) and defines four:
//
//	1: mutable i32 65536, like clang's __stack_pointer, not exported
//	2: immutable i32 7
//	3: mutable i64 42, exported as "counter"
//	4: mutable i32 5, not exported
//
// so Patch must export 1 and 4, and only those.
func globalsModule() []byte {
	return wasmModule(
		vecSec(secType, funcType(nil, []byte{tI32}), funcType(nil, nil)),
		vecSec(secImport, cat(str("env"), str("g"), []byte{externGlobal, tI32, 0x00})),
		vecSec(secFunction, uleb(0), uleb(1), uleb(0)),
		vecSec(secGlobal,
			global(tI32, true, 65536),
			global(tI32, false, 7),
			global(tI64, true, 42),
			global(tI32, true, 5)),
		vecSec(secExport,
			exportEntry("counter", externGlobal, 3),
			exportEntry("get_sp", externFunc, 0),
			exportEntry("push_frame", externFunc, 1),
			exportEntry("imported_plus_const", externFunc, 2)),
		vecSec(secCode,
			body(nil, globalGet(1)),
			body(nil, globalGet(1), i32Const(16), i32Sub, globalSet(1)),
			body(nil, globalGet(0), globalGet(2), i32Add),
		),
	)
}

// computeModule exercises the control flow the rewrite must keep intact.
// Type 0 is (i32) -> (i32), type 1 (i32, i32) -> (i32). A table holds
// fact and sum for dispatch.
func computeModule() []byte {
	typeIndex0 := sleb(0) // a type-index block type: [i32] -> [i32]
	return wasmModule(
		vecSec(secType,
			funcType([]byte{tI32}, []byte{tI32}),
			funcType([]byte{tI32, tI32}, []byte{tI32})),
		vecSec(secFunction, uleb(0), uleb(0), uleb(0), uleb(0), uleb(1), uleb(0)),
		vecSec(secTable, []byte{tFuncref, 0x00, 0x02}),
		vecSec(secExport,
			exportEntry("fact", externFunc, 0),
			exportEntry("sum", externFunc, 1),
			exportEntry("classify", externFunc, 2),
			exportEntry("nested", externFunc, 3),
			exportEntry("dispatch", externFunc, 4),
			exportEntry("misc", externFunc, 5)),
		vecSec(secElement, cat([]byte{0x00}, i32Const(0), end, vec(uleb(0), uleb(1)))),
		vecSec(secCode,
			// fact(n): iterative, a loop in a block.
			body([][2]byte{{1, tI32}},
				i32Const(1), localSet(1),
				block(),
				/**/ loop(),
				/*  */ localGet(0), i32Eqz, brIf(1),
				/*  */ localGet(1), localGet(0), i32Mul, localSet(1),
				/*  */ localGet(0), i32Const(1), i32Sub, localSet(0),
				/*  */ br(0),
				/**/ end,
				end,
				localGet(1)),
			// sum(n) = n + (n-1) + ... + 1: a loop inside an if, whose
			// block type is a type index; the running sum is the loop's
			// parameter, on the stack when the check runs.
			body(nil,
				localGet(0), i32Const(0), i32GtS,
				ifOp(tI32),
				/**/ i32Const(0),
				/**/ loop(typeIndex0...),
				/*  */ localGet(0), i32Add,
				/*  */ localGet(0), i32Const(1), i32Sub, localTee(0),
				/*  */ brIf(0),
				/**/ end,
				elseOp,
				/**/ i32Const(0),
				end),
			// classify(x): br_table to 100, 200 or (default) 300.
			body(nil,
				block(), block(), block(),
				localGet(0), brTable(2, 0, 1),
				end, i32Const(100), ret,
				end, i32Const(200), ret,
				end, i32Const(300)),
			// nested(n) = n(n-1)/2, counted by two nested loops.
			body([][2]byte{{3, tI32}}, // i, j, acc
				block(),
				/**/ loop(),
				/*  */ localGet(1), localGet(0), i32GeS, brIf(1),
				/*  */ i32Const(0), localSet(2),
				/*  */ block(),
				/*    */ loop(),
				/*      */ localGet(2), localGet(1), i32GeS, brIf(1),
				/*      */ localGet(3), i32Const(1), i32Add, localSet(3),
				/*      */ localGet(2), i32Const(1), i32Add, localSet(2),
				/*      */ br(0),
				/*    */ end,
				/*  */ end,
				/*  */ localGet(1), i32Const(1), i32Add, localSet(1),
				/*  */ br(0),
				/**/ end,
				end,
				localGet(3)),
			// dispatch(sel, n) = table[sel](n)
			body(nil, localGet(1), localGet(0), callIndirect(0, 0)),
			// misc(x) = x > 0 ? int8(x) : -1, through sign extension, a
			// float round trip with a saturating truncation, and a typed
			// select.
			body(nil,
				localGet(0), []byte{0xc0, 0xb2, opPrefixMisc, 0x00}, // i32.extend8_s, f32.convert_i32_s, i32.trunc_sat_f32_s
				i32Const(-1),
				localGet(0), i32Const(0), i32GtS,
				[]byte{opSelectTyped, 0x01, tI32}),
		),
	)
}

// benchModule's run(n) loops n times over a little arithmetic and returns
// the result, so that the loop cannot be optimised away.
func benchModule() []byte {
	return wasmModule(
		vecSec(secType, funcType([]byte{tI32}, []byte{tI32})),
		vecSec(secFunction, uleb(0)),
		vecSec(secExport, exportEntry("run", externFunc, 0)),
		vecSec(secCode,
			body([][2]byte{{2, tI32}}, // i, acc
				loop(),
				/**/ localGet(2), i32Const(5), i32Rotl, localGet(1), i32Xor,
				/**/ i32Const(-1640531535), i32Mul, localSet(2), // acc = (rotl(acc, 5) ^ i) * golden ratio
				/**/ localGet(1), i32Const(1), i32Add, localTee(1),
				/**/ localGet(0), i32LtU, brIf(0),
				end,
				localGet(2)),
		),
	)
}

// benchResult is what benchModule's run(n) computes, in Go.
func benchResult(n uint32) uint32 {
	var acc uint32
	for i := uint32(0); ; {
		acc = ((acc<<5 | acc>>27) ^ i) * 2654435761
		if i++; i >= n {
			return acc
		}
	}
}

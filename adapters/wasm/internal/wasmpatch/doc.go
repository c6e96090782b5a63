// Package wasmpatch rewrites a WebAssembly module so that a wazero host
// running it in process (CPython built for wasm32-wasi, in this project)
// can stop it anywhere and start new instances from a memory image.
//
// Patch makes these changes, none of which moves an existing index (types,
// functions, globals and exports are only appended):
//
//   - Interrupt checks. A new mutable i32 global, exported as
//     InterruptGlobal, is tested at a safepoint reached from the top of
//     every loop (see Safepoints); when the host sets it to 1 the instance
//     traps with "unreachable" within SafepointInterval iterations, even in
//     a C loop that never returns to the interpreter, and is then
//     discarded. wazero's WithCloseOnContextDone gives the same
//     guarantee with an out-of-line call at every back-edge, which made
//     CPU-bound code several times slower (wazero issue #2466; see
//     BenchmarkLoop); a countdown and a predicted branch cost little.
//   - Exported globals. Every mutable defined global not exported already
//     is exported as GlobalExportPrefix followed by its index, e.g.
//     "codeport_global.0" for clang's __stack_pointer, so that the host can
//     read them from an initialised template instance and write them into
//     fresh instances restored from its memory image.
//   - Passive data. Active data segments become passive, so instantiation
//     no longer writes them into memory (where they would clobber a
//     restored image); InitDataFunc writes and drops them instead, in the
//     original order. A template instance calls it once, before
//     _initialize or _start.
//   - Invoke dispatchers, only for a module that imports functions
//     env.invoke_<sig>, as LLVM's Emscripten-style lowering of C++
//     exceptions and setjmp/longjmp (-mllvm
//     -enable-emscripten-cxx-exceptions, -enable-emscripten-sjlj) makes
//     them: the host implements such an import, whose type is (i32 fp,
//     T1..Tn) -> R, by calling function fp of table 0 and catching what
//     it throws, and a host cannot call through a table. So each import
//     gets a defined function of its own type, exported as
//     InvokeExportPrefix followed by the name after "invoke_" (e.g.
//     "codeport_invoke.vii"), which calls table 0's entry fp with the
//     other arguments through call_indirect of type (T1..Tn) -> R; that
//     type is appended to the type section when the module has none
//     equal. An import whose first parameter is not an i32, with more
//     than one result, imported twice, or in a module without a funcref
//     table 0, is refused. A module without such imports is written
//     exactly as without this step.
//
// DWARF custom sections (".debug_*") are dropped, since their code offsets
// no longer hold; every other section is copied byte for byte. Patch
// accepts the MVP with mutable globals, sign extension, non-trapping
// float-to-int, bulk memory, reference types, multi-value and fixed-width
// SIMD (v128 and the 0xfd instructions of WebAssembly 2.0, what clang
// emits with -msimd128 and wazero runs): what clang and wasm-ld produce
// for wasm32-wasi. It refuses relaxed SIMD (0xfd 0x100 on, which wazero
// does not implement), threads, exception handling (the instructions: the
// Emscripten-style lowering above uses none), tail calls and GC
// instructions, a mutable v128 global it would export (the host carries
// exported globals as 64 bits), data segment offsets that are not a
// single i32.const, export names it reserves for what it adds, and a
// module it patched already. Like the rest of the patch, the SIMD decoding
// checks the encoding, not validity: a lane index out of range for its
// shape is copied as it is, for the engine's validator to refuse.
//
// Typical use, with wazero's compiler (its interpreter reads globals in Go,
// so setting InterruptGlobal during a call is a data race there):
//
//	patched, stats, err := wasmpatch.Patch(raw)
//	if err != nil {
//		return err
//	}
//	log.Printf("wasmpatch: %v", stats)
//	compiled, err := rt.CompileModule(ctx, patched)
//	...
//	mod, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithStartFunctions())
//	...
//	if _, err := mod.ExportedFunction(wasmpatch.InitDataFunc).Call(ctx); err != nil {
//		return err
//	}
//	go func() {
//		<-ctx.Done() // from any goroutine, while the module runs
//		mod.ExportedGlobal(wasmpatch.InterruptGlobal).(api.MutableGlobal).Set(1)
//	}()
//	_, err = mod.ExportedFunction("_start").Call(context.Background()) // traps once interrupted
//
// # Safepoints
//
// The check is a countdown: every SafepointInterval loop iterations, across
// all loops, the code calls an added safepoint function, which resets the
// countdown, grows memory by 0 pages and traps if InterruptGlobal is set.
// wazero runs memory.grow in Go, and that exit is what the Go runtime
// needs: compiled code cannot be preempted, so a loop that never left it
// would hold off every stop-the-world (a garbage collection) of the
// process, and with it every goroutine, the one meant to set the interrupt
// included. WithCloseOnContextDone exits to Go at every iteration, which is
// why it is slow; one exit per SafepointInterval iterations costs little.
// A module without a memory gets one of no pages for the safepoint.
//
// The check is at loop headers only: code blocked in a host function (a
// WASI read, say) is not stopped by it until it returns to a loop, and
// recursion without loops is bounded by the stack, not by the check.
//
// The command in cmd/wasmpatch applies Patch to a file.
package wasmpatch

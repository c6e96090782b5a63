package wasmpatch

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// BenchmarkLoop compares the cost of the two ways to make a running loop
// stoppable: wazero's WithCloseOnContextDone, which calls out of line at
// every back-edge to check the context, and Patch's countdown with a
// safepoint every SafepointInterval iterations. The baseline has neither
// and cannot be stopped. One op is one call of 10^8 iterations of a little
// arithmetic.
func BenchmarkLoop(b *testing.B) {
	const iterations = 100_000_000
	original := benchModule()
	patched, _, err := Patch(original)
	if err != nil {
		b.Fatal(err)
	}
	want := uint64(benchResult(iterations))
	for _, bc := range variants(original, patched) {
		b.Run(bc.name, func(b *testing.B) {
			// A cancellable context, as a host with deadlines has.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			run := instantiate(b, newRuntime(b, bc.config), bc.module, "").ExportedFunction("run")
			for b.Loop() {
				res, err := run.Call(ctx, iterations)
				if err != nil {
					b.Fatal(err)
				}
				if res[0] != want {
					b.Fatalf("run = %d, want %d", res[0], want)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/iterations, "ns/iteration")
		})
	}
}

// BenchmarkRealModule is BenchmarkLoop on the CPython runtime named by
// $CODEPORT_WASMPATCH_INPUT: one op is a whole interpreter run (start-up
// included) of a CPU-bound Python loop.
func BenchmarkRealModule(b *testing.B) {
	path := os.Getenv(inputEnv)
	if path == "" {
		b.Skip(inputEnv + " is not set; set it to a WASI command module, e.g. CPython's own cpython-wasi/python.wasm in build.sh's build directory, to benchmark it")
	}
	original, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	patched, _, err := Patch(original)
	if err != nil {
		b.Fatal(err)
	}
	const program = "x = 0\nfor i in range(3_000_000):\n    x += i * i\nprint(x)"
	const want = "8999995500000500000\n"
	for _, bc := range variants(original, patched) {
		b.Run(bc.name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rt := newRuntime(b, bc.config.WithDebugInfoEnabled(false))
			wasi_snapshot_preview1.MustInstantiate(ctx, rt)
			compiled, err := rt.CompileModule(ctx, bc.module)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				var stdout bytes.Buffer
				mod, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName("").
					WithStartFunctions().WithArgs("python", "-I", "-c", program).WithStdout(&stdout))
				if err != nil {
					b.Fatal(err)
				}
				if init := mod.ExportedFunction(InitDataFunc); init != nil {
					if _, err := init.Call(ctx); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := mod.ExportedFunction("_start").Call(ctx); !exitedZero(err) {
					b.Fatal(err)
				}
				if stdout.String() != want {
					b.Fatalf("printed %q, want %q", stdout.String(), want)
				}
				_ = mod.Close(ctx)
			}
		})
	}
}

// variant is one way of running a module that the benchmarks compare.
type variant struct {
	name   string
	config wazero.RuntimeConfig
	module []byte
}

// variants are the module as it was, with wazero's own way to stop it
// (WithCloseOnContextDone), and as Patch leaves it.
func variants(original, patched []byte) []variant {
	return []variant{
		{"unpatched", wazero.NewRuntimeConfig(), original},
		{"unpatched-close-on-context-done", wazero.NewRuntimeConfig().WithCloseOnContextDone(true), original},
		{"patched", wazero.NewRuntimeConfig(), patched},
	}
}

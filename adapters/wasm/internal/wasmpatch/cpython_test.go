package wasmpatch

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/codeport/codeport/internal/testkit/testwait"
)

// inputEnv names a real WASI command module to patch, e.g. CPython's own
// python.wasm that build.sh leaves in its build directory
// (cpython-wasi/python.wasm); this test is skipped without it.
const inputEnv = "CODEPORT_WASMPATCH_INPUT"

// wantEnv names the file Patch must turn $CODEPORT_WASMPATCH_INPUT into,
// byte for byte: e.g. the committed runtime/python.wasm when the input is
// the module build.sh links before patching (out/python-linked.wasm in its
// build directory). A change to Patch must leave a module it does not
// concern as it was.
const wantEnv = "CODEPORT_WASMPATCH_WANT"

func TestPatchGivesTheCommittedBytes(t *testing.T) {
	in, want := os.Getenv(inputEnv), os.Getenv(wantEnv)
	if in == "" || want == "" {
		t.Skip(inputEnv + " and " + wantEnv + " are not both set; set them to build.sh's out/python-linked.wasm and the committed runtime/python.wasm")
	}
	raw, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	wantBytes, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	got, stats, err := Patch(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wantBytes) {
		t.Fatalf("Patch(%s) differs from %s (%d bytes against %d)", in, want, len(got), len(wantBytes))
	}
	t.Logf("%s: %v", want, stats)
}

// TestPatchRealModule patches the module named by $CODEPORT_WASMPATCH_INPUT
// and instantiates it with wazero's compiler: its memory after
// InitDataFunc must equal the original's after instantiation. When it is
// a WASI command such as CPython, it is also run (print(6*7)) and
// interrupted in an endless Python loop.
func TestPatchRealModule(t *testing.T) {
	path := os.Getenv(inputEnv)
	if path == "" {
		t.Skip(inputEnv + " is not set; set it to a WASI command module, e.g. CPython's own cpython-wasi/python.wasm in build.sh's build directory, to patch and run it")
	}
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("wazero has no compiler for " + runtime.GOARCH)
	}
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	patched, stats, err := Patch(in)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("patched in %v: %v", time.Since(start), stats)

	ctx := context.Background()
	rt := newRuntime(t, wazero.NewRuntimeConfigCompiler().WithDebugInfoEnabled(false))
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	// codeport's CPython imports permission bits from its host (the
	// runtime's filemode.c): here a host without any.
	i32 := api.ValueTypeI32
	noBits := rt.NewHostModuleBuilder("codeport_fs")
	noBits.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) {
		stack[0] = api.EncodeI32(-1)
	}), []api.ValueType{i32, i32}, []api.ValueType{i32}).Export("mode")
	noBits.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) {
		stack[0] = 63 // EPERM
	}), []api.ValueType{i32, i32, i32}, []api.ValueType{i32}).Export("chmod")
	if _, err := noBits.Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	compile := func(bin []byte) wazero.CompiledModule {
		start := time.Now()
		c, err := rt.CompileModule(ctx, bin)
		if err != nil {
			t.Fatalf("compile: %v", err)
		}
		t.Logf("compiled %d bytes in %v", len(bin), time.Since(start))
		return c
	}
	original, compiled := compile(in), compile(patched)
	// The scientific runtime also imports what its C++ exceptions need
	// (env.invoke_*, codeport_cxx.throw; adapters/wasm provides them):
	// here stubs, which instantiation does not call.
	stubs := map[string]wazero.HostModuleBuilder{}
	for _, def := range original.ImportedFunctions() {
		modName, name, _ := def.Import()
		if modName != InvokeImportModule && modName != "codeport_cxx" {
			continue
		}
		b, ok := stubs[modName]
		if !ok {
			b = rt.NewHostModuleBuilder(modName)
			stubs[modName] = b
		}
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(context.Context, api.Module, []uint64) {
			panic(modName + "." + name + " is a stub in this test")
		}), def.ParamTypes(), def.ResultTypes()).Export(name)
	}
	for _, b := range stubs {
		if _, err := b.Instantiate(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// Instantiation alone, no start function: the original's data
	// segments are in memory, the patched one's only after InitDataFunc.
	newInstance := func(c wazero.CompiledModule, stdout *bytes.Buffer, args ...string) api.Module {
		t.Helper()
		cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions().WithArgs(args...)
		if stdout != nil {
			cfg = cfg.WithStdout(stdout)
		}
		mod, err := rt.InstantiateModule(ctx, c, cfg)
		if err != nil {
			t.Fatalf("instantiate: %v", err)
		}
		t.Cleanup(func() { _ = mod.Close(ctx) })
		return mod
	}
	memoryOf := func(mod api.Module) []byte {
		if mod.Memory() == nil {
			return nil
		}
		return read(t, mod.Memory(), 0, mod.Memory().Size())
	}
	want := memoryOf(newInstance(original, nil))
	mod := newInstance(compiled, nil)
	call(t, mod, InitDataFunc)
	if !bytes.Equal(memoryOf(mod), want) {
		t.Fatalf("memory after %s differs from the original's after instantiation", InitDataFunc)
	}
	if mod.ExportedGlobal(InterruptGlobal) == nil {
		t.Fatalf("%s is not exported", InterruptGlobal)
	}
	if compiled.ExportedFunctions()["_start"] == nil {
		t.Log("not a WASI command: not run")
		return
	}

	// The interpreter runs, from the memory InitDataFunc laid out.
	var stdout bytes.Buffer
	mod = newInstance(compiled, &stdout, "python", "-I", "-c", "print(6*7)")
	call(t, mod, InitDataFunc)
	if _, err := mod.ExportedFunction("_start").Call(ctx); !exitedZero(err) {
		t.Fatalf("_start: %v", err)
	}
	if got := stdout.String(); got != "42\n" {
		t.Fatalf("print(6*7) wrote %q", got)
	}

	// And it stops in a loop that never calls out of the interpreter.
	mod = newInstance(compiled, nil, "python", "-I", "-c", "while True: pass")
	call(t, mod, InitDataFunc)
	done := make(chan error, 1)
	go func() {
		_, err := mod.ExportedFunction("_start").Call(ctx)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the endless loop returned before the interrupt: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	collectWhileSpinning()
	mod.ExportedGlobal(InterruptGlobal).(api.MutableGlobal).Set(1)
	set := time.Now()
	// Not interrupted, the loop would never end: wait for as long as the
	// test binary allows.
	wait, cancel := testwait.Context(t)
	defer cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("interrupted run returned %v, want an unreachable trap", err)
		}
		t.Logf("interrupted %v after the global was set", time.Since(set))
	case <-wait.Done():
		t.Fatalf("still running %s after the interrupt", time.Since(set).Round(time.Second))
	}
}

func exitedZero(err error) bool {
	var exit *sys.ExitError
	return err == nil || (errors.As(err, &exit) && exit.ExitCode() == 0)
}

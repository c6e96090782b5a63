package wasmpatch

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// hostModule is the smallest module Check accepts: the runtime's entry
// points exported (all by one function), and one import of each kind the
// host provides.
func hostModule(imports ...[]byte) []byte {
	if imports == nil {
		imports = [][]byte{
			cat(str("wasi_snapshot_preview1"), str("fd_write"), []byte{externFunc}, uleb(0)),
			cat(str("codeport_fs"), str("mode"), []byte{externFunc}, uleb(0)),
			cat(str("codeport_fs"), str("chmod"), []byte{externFunc}, uleb(0)),
			cat(str("codeport_cxx"), str("throw"), []byte{externFunc}, uleb(0)),
			invokeImportEntry("invoke_vi", 0),
		}
	}
	exports := [][]byte{exportEntry("memory", externMemory, 0)}
	for _, name := range RequiredExports[1:] {
		exports = append(exports, exportEntry(name, externFunc, uint32(len(imports))))
	}
	return wasmModule(
		vecSec(secType, funcType([]byte{tI32, tI32}, nil), funcType(nil, nil)),
		vecSec(secImport, imports...),
		vecSec(secFunction, uleb(1)),
		vecSec(secTable, []byte{tFuncref, 0x00, 0x01}),
		vecSec(secMemory, []byte{0x00, 0x01}),
		vecSec(secExport, exports...),
		vecSec(secCode, body(nil)),
		vecSec(secData, activeData(16, "data")),
		customSec("name", []byte{}),
	)
}

func TestCheckAcceptsTheHostInterface(t *testing.T) {
	res, err := Check(hostModule())
	if err != nil {
		t.Fatal(err)
	}
	if res.Imports != 5 {
		t.Errorf("Imports = %d, want 5", res.Imports)
	}
	want := slices.Sorted(slices.Values(RequiredExports))
	if !slices.Equal(res.Exports, want) {
		t.Errorf("Exports = %q, want %q", res.Exports, want)
	}
	// A further export is required only when named.
	if _, err := Check(hostModule(), "_initialize", "codeport_run"); err != nil {
		t.Errorf("naming required exports again: %v", err)
	}
}

// The patched module is checked with InitDataFunc, which the linked one
// lacks.
func TestCheckPatchedModule(t *testing.T) {
	linked := hostModule()
	_, err := Check(linked, InitDataFunc)
	if !errors.Is(err, ErrHostInterface) || !strings.Contains(err.Error(), "missing exports: ["+InitDataFunc+"]") {
		t.Fatalf("the linked module with %s required: %v", InitDataFunc, err)
	}
	patched, _ := mustPatch(t, linked)
	res, err := Check(patched, InitDataFunc)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Exports, InterruptGlobal) || !slices.Contains(res.Exports, InvokeExportPrefix+"vi") {
		t.Errorf("the patched module's exports lack the patch's: %q", res.Exports)
	}
}

func TestCheckRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		module  []byte
		exports []string
		want    string // in the error
	}{
		{"another module's function",
			hostModule(cat(str("env"), str("malloc"), []byte{externFunc}, uleb(0))), nil, "[env.malloc]"},
		{"another host function",
			hostModule(cat(str("codeport_fs"), str("unlink"), []byte{externFunc}, uleb(0))), nil, "[codeport_fs.unlink]"},
		{"an imported memory",
			hostModule(cat(str("wasi_snapshot_preview1"), str("memory"), []byte{externMemory, 0x01, 0x01, 0x02})), nil,
			"[wasi_snapshot_preview1.memory]"},
		{"an imported table and global",
			hostModule(
				cat(str("env"), str("__indirect_function_table"), []byte{externTable, tFuncref, 0x00, 0x01}),
				cat(str("env"), str("__stack_pointer"), []byte{externGlobal, tI32, 0x01}),
				cat(str("wasi_snapshot_preview1"), str("proc_exit"), []byte{externFunc}, uleb(0))),
			nil, "[env.__indirect_function_table env.__stack_pointer]"},
		{"a missing export", hostModule(), []string{"codeport_later", "codeport_extra"},
			"missing exports: [codeport_extra codeport_later]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check(tc.module, tc.exports...)
			if !errors.Is(err, ErrHostInterface) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want ErrHostInterface naming %s", err, tc.want)
			}
		})
	}
	// Without any exports, all the required ones are missing.
	_, err := Check(wasmModule())
	if !errors.Is(err, ErrHostInterface) || !strings.Contains(err.Error(), "missing exports: [_initialize codeport_boot") {
		t.Errorf("an empty module: %v", err)
	}
}

func TestCheckMalformed(t *testing.T) {
	good := hostModule()
	for _, bad := range [][]byte{
		nil,
		[]byte("\x00asm\x02\x00\x00\x00"),
		good[:len(good)/2],
		hostModule(cat(str("env"), str("x"), []byte{0x07})), // unknown import kind
	} {
		if _, err := Check(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("Check(% x...) = %v, want ErrMalformed", bad[:min(len(bad), 8)], err)
		}
	}
}

// The committed runtimes, as build.sh checks them after wasmpatch.
func TestCheckCommittedRuntimes(t *testing.T) {
	for _, path := range []string{
		"../cpython/runtime/python.wasm",
		"../cpython/scientific/runtime/python-scientific.wasm",
	} {
		raw, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			t.Logf("%s: not there", path)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		res, err := Check(raw, InitDataFunc)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		t.Logf("%s: %d imports, %d exports", path, res.Imports, len(res.Exports))
	}
}

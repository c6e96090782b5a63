package wasmpatch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandCheck runs the command as the runtime's build does
// (wasmpatch -check MODULE [EXPORT...]) on the committed runtime: it
// passes, and fails naming the module for an export the module lacks, a
// file that is not a module and a file that is not there. (The test lives
// here, not beside the command: two test packages named wasmpatch would
// collide in make test's one directory of test binaries.)
func TestCommandCheck(t *testing.T) {
	const committed = "../cpython/runtime/python.wasm"
	if _, err := os.Stat(committed); err != nil {
		t.Skipf("no committed runtime: %v", err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build the command")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "wasmpatch")
	if out, err := exec.Command(goBin, "build", "-o", bin, "./cmd/wasmpatch").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(args ...string) (string, error) {
		out, err := exec.Command(bin, args...).CombinedOutput()
		return string(out), err
	}
	if out, err := run("-check", committed, InitDataFunc); err != nil || !strings.Contains(out, "exports:") {
		t.Fatalf("the committed runtime: %v\n%s", err, out)
	}
	if out, err := run("-check", committed, "codeport_nonexistent"); err == nil || !strings.Contains(out, committed) || !strings.Contains(out, "codeport_nonexistent") {
		t.Errorf("an export the module lacks: %v\n%s", err, out)
	}
	notWasm := filepath.Join(dir, "x.wasm")
	if err := os.WriteFile(notWasm, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run("-check", notWasm); err == nil || !strings.Contains(out, notWasm) {
		t.Errorf("not a module: %v\n%s", err, out)
	}
	if out, err := run("-check", filepath.Join(dir, "missing.wasm")); err == nil {
		t.Errorf("a missing file was checked:\n%s", out)
	}
	if out, err := run("-check"); err == nil || !strings.Contains(out, "usage") {
		t.Errorf("no module named: %v\n%s", err, out)
	}
}

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codeport/codeport/adapters/wasm/internal/wasmpatch"
)

// committed is the default runtime, patched, as build.sh's patch step
// checks it.
const committed = "../../../cpython/runtime/python.wasm"

func TestRunCheck(t *testing.T) {
	if _, err := os.Stat(committed); err != nil {
		t.Skipf("no committed runtime: %v", err)
	}
	if err := runCheck(committed, []string{wasmpatch.InitDataFunc}); err != nil {
		t.Fatal(err)
	}
	err := runCheck(committed, []string{"codeport_nonexistent"})
	if !errors.Is(err, wasmpatch.ErrHostInterface) || !strings.Contains(err.Error(), committed) ||
		!strings.Contains(err.Error(), "codeport_nonexistent") {
		t.Fatalf("an export the module lacks: %v", err)
	}
	notWasm := filepath.Join(t.TempDir(), "x.wasm")
	if err := os.WriteFile(notWasm, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runCheck(notWasm, nil); !errors.Is(err, wasmpatch.ErrMalformed) {
		t.Fatalf("not a module: %v", err)
	}
	if err := runCheck(filepath.Join(t.TempDir(), "missing.wasm"), nil); err == nil {
		t.Fatal("a missing file was checked")
	}
}

// Command wasmpatch rewrites a WebAssembly module for the in-process
// CPython host: a safepoint reached from every loop header, where the interrupt is checked, every mutable global
// exported, data segments made passive, and a dispatcher exported for each env.invoke_* import. See package
// wasmpatch.
//
// Usage:
//
//	go run ./adapters/wasm/internal/wasmpatch/cmd/wasmpatch -in python.wasm -out patched.wasm
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/codeport/codeport/adapters/wasm/internal/wasmpatch"
)

func main() {
	in := flag.String("in", "", "the module to patch")
	out := flag.String("out", "", "where to write the patched module")
	flag.Parse()
	if *in == "" || *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: wasmpatch -in module.wasm -out patched.wasm")
		os.Exit(2)
	}
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, err) // Patch's errors say "wasmpatch: ..." already
		os.Exit(1)
	}
}

func run(inPath, outPath string) error {
	src, err := os.ReadFile(inPath)
	if err != nil {
		return fmt.Errorf("wasmpatch: %w", err)
	}
	patched, stats, err := wasmpatch.Patch(src)
	if err != nil {
		return err
	}
	if err := os.WriteFile(outPath, patched, 0o644); err != nil {
		return fmt.Errorf("wasmpatch: %w", err)
	}
	fmt.Printf("%s: %v\n", outPath, stats)
	return nil
}

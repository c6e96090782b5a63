// Command wasmpatch rewrites a WebAssembly module for the in-process
// CPython host: a safepoint reached from every loop header, where the interrupt is checked, every mutable global
// exported, data segments made passive, and a dispatcher exported for each env.invoke_* import. See package
// wasmpatch.
//
// With -check it rewrites nothing, and instead checks that a module fits
// the host (wasmpatch.Check): it imports only WASI preview 1's functions
// and the host's own, and exports the runtime's entry points and any
// further names given. The runtime's build runs it on the linked module
// and on the patched one.
//
// Usage:
//
//	go run ./adapters/wasm/internal/wasmpatch/cmd/wasmpatch -in python.wasm -out patched.wasm
//	go run ./adapters/wasm/internal/wasmpatch/cmd/wasmpatch -check python.wasm [EXPORT...]
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/codeport/codeport/adapters/wasm/internal/wasmpatch"
)

func main() {
	in := flag.String("in", "", "the module to patch")
	out := flag.String("out", "", "where to write the patched module")
	check := flag.Bool("check", false, "check the module named by the first argument instead of patching; further arguments name exports it must have too")
	flag.Parse()
	var err error
	switch {
	case *check && *in == "" && *out == "" && flag.NArg() >= 1:
		err = runCheck(flag.Arg(0), flag.Args()[1:])
	case !*check && *in != "" && *out != "" && flag.NArg() == 0:
		err = run(*in, *out)
	default:
		fmt.Fprintln(os.Stderr, "usage: wasmpatch -in module.wasm -out patched.wasm\n       wasmpatch -check module.wasm [EXPORT...]")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // the package's errors say "wasmpatch: ..." already
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

func runCheck(path string, exports []string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("wasmpatch: %w", err)
	}
	res, err := wasmpatch.Check(src, exports...)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fmt.Printf("%d imports; exports: %s\n", res.Imports, strings.Join(res.Exports, " "))
	return nil
}

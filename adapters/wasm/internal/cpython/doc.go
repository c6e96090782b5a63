// Package cpython holds codeport's own build of CPython for WASI, embedded
// in the binary: the reactor module (runtime/python.wasm, entered through
// the exports of entry.c) and the sourceless standard library
// (runtime/python313.zip), both made by runtime/build.sh, beside them,
// from upstream sources fetched by package name and checked by sha256.
// runtime/SHA256SUMS names the committed artifacts; `make runtime-rebuild`
// rebuilds them and fails if a byte differs.
//
// Embedding means a Go program that imports codeport needs nothing else
// installed and cannot run a runtime other than the one it was built and
// tested with.
//
//	rt := wazero.NewRuntime(ctx)
//	compiled, err := rt.CompileModule(ctx, cpython.Module())
//	fsCfg := wazero.NewFSConfig().WithFSMount(cpython.Stdlib(), cpython.StdlibDir)
package cpython

// Package testcache names the wazero compilation cache the tests share, so
// that the runtime is compiled once per machine rather than at every
// adapter a test starts. make test fills it first, outside the race
// detector (TestPrecompile), so that no test compiles a module under it.
//
//	cfg := wasm.NewConfig().WithCompilationCacheDir(testcache.Dir())
//
// It is the directory a server uses by default
// (wasm.DefaultCompilationCacheDir), so that the codeport binary that
// tests run (workers, the commands) finds what `codeport compile` put
// there. wazero files entries under its own version, which a test binary
// does not know ("dev"), so test binaries and the codeport binary keep
// apart sets in it. The cache is wazero's own file cache: entries are
// keyed by the module's bytes and written by rename, so test processes
// running at once share it safely. It lives under the user's cache
// directory (private to the user), never in a shared /tmp, where another
// user could plant compiled code.
package testcache

import (
	"os"
	"path/filepath"

	"github.com/tetratelabs/wazero"
)

// Dir is the shared cache directory, created if need be, or "" (compile
// in memory) when the user has no cache directory.
func Dir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	// The same path as wasm.DefaultCompilationCacheDir, which cannot be
	// imported here: the wasm package's own tests use this one.
	dir := filepath.Join(base, "codeport", "wazero")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	return dir
}

// Cache is the shared cache as a wazero.CompilationCache, for tests that
// compile a module themselves (the shell's), or a cache in memory when
// there is no directory for it.
func Cache() wazero.CompilationCache {
	if dir := Dir(); dir != "" {
		if c, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
			return c
		}
	}
	return wazero.NewCompilationCache()
}

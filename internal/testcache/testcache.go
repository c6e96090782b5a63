// Package testcache names the wazero compilation cache the tests share, so
// that the runtime is compiled once per machine rather than at every
// adapter a test starts. It is the cache a server uses by default
// (wasm.DefaultCompilationCacheDir), so that `make test` fills it once,
// outside the race detector, with `codeport compile --all-profiles`, and
// every test, and the commands tests run with their default settings,
// find the modules there.
//
//	cfg := wasm.NewConfig().WithCompilationCacheDir(testcache.Dir())
//
// Compiling the scientific runtime takes minutes under the race detector
// on a loaded machine; tests that each compiled it waited on one another
// past their deadlines. The cache is wazero's own file cache: entries are
// keyed by the module's bytes and wazero's version, and written by rename,
// so test processes running at once share it safely. It lives under the
// user's cache directory (private to the user), never in a shared /tmp,
// where another user could plant compiled code.
package testcache

import (
	"os"
	"path/filepath"
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

// Package testcache names the wazero compilation cache the tests share, so
// that the runtime is compiled once per machine rather than at every
// adapter a test starts.
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
	dir := filepath.Join(base, "codeport", "test-wazero")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	return dir
}

package testcache_test

import (
	"testing"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/testkit/testcache"
)

// TestPrecompile compiles every embedded module into the tests' cache and
// checks that the cache then serves each of them. make test runs it first,
// without the race detector, so that no test compiles a module under it
// (minutes for the scientific profile on two cores): a test binary finds
// compiled code only in what a test binary wrote, since wazero files it
// by its own version, which a test binary's build information lacks
// ("dev"; the codeport binary says v1.12.0).
func TestPrecompile(t *testing.T) {
	dir := testcache.Dir()
	if dir == "" {
		t.Skip("no user cache directory: every test compiles in memory")
	}
	cfg := wasm.NewConfig().WithCompilationCacheDir(dir)
	if _, err := wasm.Precompile(t.Context(), cfg, wasm.Profiles()...); err != nil {
		t.Fatal(err)
	}
	mods, err := wasm.Precompile(t.Context(), cfg, wasm.Profiles()...)
	if err != nil {
		t.Fatalf("again: %v", err)
	}
	if want := len(wasm.Profiles()) + 1; len(mods) != want {
		t.Fatalf("%d modules, want %d (an interpreter a profile, and the shell): %+v", len(mods), want, mods)
	}
	for _, m := range mods {
		if m.Compiled {
			t.Errorf("the %s %s was compiled again, not loaded from %s", m.Name, m.Profile, dir)
		}
		t.Logf("%s %s (%d bytes) loaded in %s", m.Name, m.Profile, m.Bytes, m.Duration)
	}
}

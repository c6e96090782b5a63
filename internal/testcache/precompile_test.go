package testcache_test

import (
	"testing"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/testcache"
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
	for _, profile := range wasm.Profiles() {
		cfg := wasm.NewConfig().WithCompilationCacheDir(dir).WithProfile(profile)
		if _, err := wasm.Precompile(t.Context(), cfg); err != nil {
			t.Fatalf("profile %s: %v", profile, err)
		}
		mods, err := wasm.Precompile(t.Context(), cfg)
		if err != nil {
			t.Fatalf("profile %s, again: %v", profile, err)
		}
		if len(mods) != 2 {
			t.Fatalf("profile %s: %d modules, want the interpreter and the shell: %+v", profile, len(mods), mods)
		}
		for _, m := range mods {
			if m.Compiled {
				t.Errorf("profile %s: the %s was compiled again, not loaded from %s", profile, m.Name, dir)
			}
			t.Logf("profile %s: %s (%d bytes) loaded in %s", profile, m.Name, m.Bytes, m.Duration)
		}
	}
}

// Package wasmtest starts the in-process adapter over the embedded runtime
// for the tests of other packages (server, conformance, adapters/http,
// binding, cmd), so that each does not repeat how.
//
//	a := wasmtest.New(t, func(c wasm.Config) wasm.Config { return c.WithMaxSessions(4) })
//	srv := httptest.NewServer(server.NewHandler(a))
package wasmtest

import (
	"testing"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/testkit/testcache"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/port"
)

// New starts an adapter with a private sessions directory and tweak
// applied to its configuration; it waits until the runtime is compiled and
// its interpreter image made, and closes the adapter when t ends.
func New(t testing.TB, tweak func(wasm.Config) wasm.Config, opts ...port.Option) *port.Port {
	t.Helper()
	cfg := wasm.NewConfig().WithSessionsDir(t.TempDir()).WithCompilationCacheDir(testcache.Dir())
	if tweak != nil {
		cfg = tweak(cfg)
	}
	a, err := wasm.New(cfg, opts...)
	if err != nil {
		t.Fatalf("wasm.New: %v", err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("wasm adapter Close: %v", err)
		}
	})
	// Compiling the runtime takes minutes under the race detector on a
	// loaded machine: no deadline but the test binary's.
	ctx, cancel := testwait.Context(t)
	defer cancel()
	if err := a.WaitReady(ctx); err != nil {
		t.Fatalf("wasm adapter WaitReady: %v", err)
	}
	return a
}

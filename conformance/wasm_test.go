package conformance

import (
	"testing"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
)

// newWasm starts the in-process adapter over the embedded runtime, for the
// tests that show the suite catches a real backend's defects (each adapter
// runs the suite itself, in its own tests).
func newWasm(t *testing.T) *port.Port {
	t.Helper()
	return wasmtest.New(t, func(c wasm.Config) wasm.Config { return c.WithMaxSessions(4) })
}

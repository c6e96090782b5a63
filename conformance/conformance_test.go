package conformance

import (
	"net/http/httptest"
	"os"
	"testing"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/internal/wasmtest"
)

// newWasm starts the in-process adapter over the embedded runtime, with room
// for four sessions so that the capacity check runs.
func newWasm(t *testing.T) *wasm.Adapter {
	t.Helper()
	return wasmtest.New(t, func(c wasm.Config) wasm.Config { return c.WithMaxSessions(4) })
}

// newHTTP returns an httpadapter over baseURL, closed when t ends.
func newHTTP(t *testing.T, baseURL, token string) *httpadapter.Adapter {
	t.Helper()
	a, err := httpadapter.New(httpadapter.NewConfig(baseURL).WithToken(token))
	if err != nil {
		t.Fatalf("httpadapter.New: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// TestWasm runs the suite against the wasm adapter in process; the session
// limit comes from Describe.
func TestWasm(t *testing.T) {
	a := newWasm(t)
	Run(t, func(*testing.T) Target { return Target{Port: a} })
}

// TestHTTPOverWasm runs the suite through httpadapter against the wasm
// adapter served by contract.NewHandler on loopback.
func TestHTTPOverWasm(t *testing.T) {
	const token = "conformance-token"
	srv := httptest.NewServer(contract.NewHandler(newWasm(t), contract.WithBearerToken(token)))
	t.Cleanup(srv.Close)
	a := newHTTP(t, srv.URL, token)
	Run(t, func(*testing.T) Target { return Target{Port: a, MaxSessions: 4} })
}

// TestExternal runs the suite against the backend at
// CODEPORT_CONFORMANCE_URL (with CODEPORT_CONFORMANCE_TOKEN, if set).
func TestExternal(t *testing.T) {
	url := os.Getenv("CODEPORT_CONFORMANCE_URL")
	if url == "" {
		t.Skip("CODEPORT_CONFORMANCE_URL is not set: no external backend to check")
	}
	a := newHTTP(t, url, os.Getenv("CODEPORT_CONFORMANCE_TOKEN"))
	Run(t, func(*testing.T) Target { return Target{Port: a} })
}

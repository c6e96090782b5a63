package httpadapter_test

import (
	"net/http/httptest"
	"os"
	"testing"
	"time"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/conformance"
	"github.com/codeport/codeport/internal/testkit/measure"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
)

// conformanceClient returns the adapter over baseURL, closed when t ends.
func conformanceClient(t *testing.T, baseURL, token string) *port.Port {
	t.Helper()
	a, err := httpadapter.New(httpadapter.NewConfig(baseURL).WithToken(token))
	if err != nil {
		t.Fatalf("httpadapter.New: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// TestConformance runs the suite every adapter must pass through this
// adapter, against the in-process runtime served by the contract's
// handler on loopback, with room for four sessions.
func TestConformance(t *testing.T) {
	const token = "conformance-token"
	backend := wasmtest.New(t, func(c wasm.Config) wasm.Config { return c.WithMaxSessions(4) }, port.WithSnapshotKey([]byte("http adapter conformance: a 32-byte key or longer")))
	srv := httptest.NewServer(server.NewHandler(backend, server.WithBearerToken(token)))
	t.Cleanup(srv.Close)
	a := conformanceClient(t, srv.URL, token)
	// The backend runs in this process.
	cpu := func() time.Duration { return measure.CPU(os.Getpid()) }
	conformance.Run(t, func(*testing.T) conformance.Target { return conformance.Target{Port: a, MaxSessions: 4, CPUTime: cpu} })
}

// TestConformanceExternal runs the suite against the backend at
// CODEPORT_CONFORMANCE_URL (with CODEPORT_CONFORMANCE_TOKEN, if set).
func TestConformanceExternal(t *testing.T) {
	url := os.Getenv("CODEPORT_CONFORMANCE_URL")
	if url == "" {
		t.Skip("CODEPORT_CONFORMANCE_URL is not set: no external backend to check")
	}
	a := conformanceClient(t, url, os.Getenv("CODEPORT_CONFORMANCE_TOKEN"))
	conformance.Run(t, func(*testing.T) conformance.Target { return conformance.Target{Port: a} })
}

package mcpserver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/codeport/codeport/mcpserver"
)

// A body is held as it arrives: the size a request announces makes the
// server hold little before the bytes come, so that connections that
// announce the cap and send nothing cannot make it hold the cap each.
func TestCheckRequestsHoldsWhatArrives(t *testing.T) {
	const maxBytes = 64 << 20
	reached := false
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached = true })
	h := mcpserver.CheckRequests(next, maxBytes)
	const msg = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	req := httptest.NewRequest(http.MethodPost, "/mcp", io.NopCloser(strings.NewReader(msg)))
	req.ContentLength = maxBytes // announced, not sent
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	h.ServeHTTP(httptest.NewRecorder(), req)
	runtime.ReadMemStats(&after)
	if !reached {
		t.Fatal("the message did not reach the handler")
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > maxBytes/4 {
		t.Errorf("a %d-byte body that announced %d bytes made the server allocate %d bytes", len(msg), maxBytes, got)
	}
}

package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/codeport/codeport/internal/testkit/wasmtest"
)

// A client that lists text/event-stream with a quality of zero, in any of
// the spellings HTTP allows (0, 0.0, 0.00, 0.000), refuses it: its exec is
// answered with plain JSON, never with events.
func TestExecNotStreamedToAClientThatRefusesEvents(t *testing.T) {
	h := servePort(t, wasmtest.New(t, nil))
	id := h.createSession("")
	for _, q := range []string{"0", "0.0", "0.00", "0.000"} {
		req, err := http.NewRequest("POST", h.srv.URL+"/sessions/"+id+"/exec",
			strings.NewReader(`{"tool":"code_execution","input":{"code":"print(1)"}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream;q="+q)
		resp := h.send(req)
		if ct := resp.header.Get("Content-Type"); resp.status != http.StatusOK || ct != "application/json" {
			t.Errorf("Accept with text/event-stream;q=%s: %d %s", q, resp.status, ct)
		}
	}
}

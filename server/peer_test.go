package server_test

import (
	"context"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
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

// endSignal is a port that tells when an Execute call has returned.
type endSignal struct {
	port.CodeExecutionPort
	ended chan struct{}
}

func (e *endSignal) Execute(ctx context.Context, id string, req port.ExecuteRequest) (port.Result, error) {
	res, err := e.CodeExecutionPort.Execute(ctx, id, req)
	close(e.ended)
	return res, err
}

// A client that asks for events and then reads none holds what the
// program printed in the server's memory until the stream ends. That must
// cost about the output itself, which the port's output limits bound,
// not a multiple of it per write: a program that writes its output a
// byte at a time (flushing each) made one queued chunk, tens of bytes,
// of every byte.
func TestUnreadStreamCostsAboutItsOutput(t *testing.T) {
	a := wasmtest.New(t, nil)
	p := &endSignal{CodeExecutionPort: a, ended: make(chan struct{})}
	h := servePort(t, p)
	id := h.createSession("")
	const writes = 1 << 20 // each stream's output limit, a byte a write
	// The streams alternate, the worst case: no two writes in a row go
	// to the same stream.
	code := `import sys\nout, err = sys.stdout, sys.stderr\nfor i in range(` + strconv.Itoa(writes) + `):\n    out.write('x'); out.flush(); err.write('y'); err.flush()\n`
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	resp := openStream(t, h, id, `{"tool":"code_execution","input":{"code":"`+code+`"},"timeout_seconds":600}`)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	<-p.ended
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	output := uint64(2 * writes)
	grown := after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
	t.Logf("%d bytes of output, %d bytes of heap", output, grown)
	if grown > 8*output {
		t.Errorf("an unread stream of %d bytes of output holds %d bytes of heap", output, grown)
	}
}

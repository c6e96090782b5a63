package sdkcheck

import (
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/codeport/codeport/internal/testkit/pyvenv"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
)

// The SSE client versions the check pins: the newest released when it was
// written.
const (
	httpxVersion    = "0.28.1"
	httpxSSEVersion = "0.4.3"
)

// TestAnSSEClientReadsTheExecStream: httpx-sse, an event-stream client we
// did not write, reads a streamed exec of the real server: the output
// arrives while the program runs (the program waits for a file the client
// uploads once it has the first line), and the events add up to the
// result (see testdata/read_exec_stream.py).
func TestAnSSEClientReadsTheExecStream(t *testing.T) {
	python := pyvenv.Python(t, "ssecheck", "httpx=="+httpxVersion, "httpx-sse=="+httpxSSEVersion)
	p := wasmtest.New(t, nil)
	srv := httptest.NewServer(server.NewHandler(p))
	t.Cleanup(srv.Close)
	ctx, cancel := testwait.Context(t)
	defer cancel()
	s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, python, "testdata/read_exec_stream.py", srv.URL, s.ID).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok") {
		t.Fatalf("httpx-sse reading the exec stream: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codeport/codeport/internal/testkit/measure"
)

// The MCP listener (codeport mcp --listen) in the hostile phase: a second
// server process, with ordinary MCP clients whose variables must survive
// beside clients that send malformed and oversized JSON-RPC bodies (issue
// 27, defects 6 and 7). Its figures (resident memory, threads, open
// files, session directories, spools) must come back as serve's do.

// mcpListener is the codeport mcp --listen process.
type mcpListener struct {
	cmd *exec.Cmd
	url string
	d   dirs
}

// startMCP starts codeport mcp --listen with directories of its own below
// dir, and waits until it answers.
func startMCP(binary, dir, isolation string, logf io.Writer) (*mcpListener, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	m := &mcpListener{url: "http://" + addr + "/mcp", d: dirs{sessions: filepath.Join(dir, "sessions"), tmp: filepath.Join(dir, "tmp")}}
	if err := os.MkdirAll(m.d.tmp, 0o700); err != nil {
		return nil, err
	}
	m.cmd = exec.Command(binary, "mcp", "--listen", addr, "--sessions-dir", m.d.sessions, "--isolation", isolation,
		"--memory-limit", "128MiB", "--max-sessions", "8", "--log-level", "warn")
	m.cmd.Env = append(os.Environ(), "TMPDIR="+m.d.tmp)
	m.cmd.Stdout, m.cmd.Stderr = logf, logf
	if err := m.cmd.Start(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for {
		cs, err := m.connect(ctx)
		if err == nil {
			cs.Close()
			return m, nil
		}
		if ctx.Err() != nil {
			m.stop()
			return nil, fmt.Errorf("codeport mcp --listen did not answer: %w", err)
		}
		pause(ctx, 200*time.Millisecond)
	}
}

func (m *mcpListener) connect(ctx context.Context) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "soak"}, nil)
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: m.url}, nil)
}

func (m *mcpListener) stop() {
	_ = m.cmd.Process.Signal(os.Interrupt)
	_ = m.cmd.Wait()
}

// figures are the listener's: it serves no /metrics, so no goroutines.
func (m *mcpListener) figures() (figures, error) {
	return measureProcess(m.cmd.Process.Pid, m.d)
}

// mcpOrdinary is an MCP client whose session's variables must survive
// between its calls, beside the hostile ones.
func (h *hostile) mcpOrdinary(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, hostileBound)
		cs, err := h.mcp.connect(cctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				h.note("mcp: connect", "error")
				h.fail("mcp: connect: %v", err)
				pause(ctx, time.Second)
			}
			continue
		}
		h.mcpSession(ctx, cs, rng)
		cs.Close()
	}
}

func (h *hostile) mcpSession(ctx context.Context, cs *mcp.ClientSession, rng *rand.Rand) {
	call := func(name string, args map[string]any) (string, bool) {
		cctx, cancel := context.WithTimeout(ctx, hostileBound)
		defer cancel()
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if ctx.Err() != nil {
			return "", false
		}
		if err != nil {
			h.note("mcp: "+name, "error")
			h.fail("mcp: %s: %v", name, err)
			return "", false
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if res.IsError {
			h.note("mcp: "+name, "tool error")
			if !strings.Contains(b.String(), "capacity") {
				h.fail("mcp: %s: %s", name, b.String())
			}
			return "", false
		}
		h.note("mcp: "+name, "ok")
		if name == "create_session" {
			sid, _ := res.StructuredContent.(map[string]any)["session_id"].(string)
			return sid, sid != ""
		}
		return b.String(), true
	}
	sid, ok := call("create_session", nil)
	if !ok {
		pause(ctx, time.Second)
		return
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hostileBound)
		defer cancel()
		if _, err := cs.CallTool(dctx, &mcp.CallToolParams{Name: "destroy_session", Arguments: map[string]any{"session_id": sid}}); err != nil {
			h.fail("mcp: destroy_session: %v", err)
		}
	}()
	for i := 0; i < 5 && ctx.Err() == nil; i++ {
		x := rng.IntN(1 << 30)
		if _, ok := call("run_python", map[string]any{"code": fmt.Sprintf("x = %d", x), "session_id": sid}); !ok {
			return
		}
		got, ok := call("run_python", map[string]any{"code": "print(x)", "session_id": sid})
		if !ok {
			return
		}
		if want := fmt.Sprintf("stdout:\n%d\nreturn_code: 0", x); got != want {
			h.note("mcp: variables kept", "LOST")
			h.fail("mcp session %s: print(x) answered %q, want %q", sid, got, want)
			return
		}
		h.note("mcp: variables kept", "kept")
	}
}

// mcpPost sends one JSON-RPC body to the listener; its answer must be one
// of want (see reply.is).
func (h *hostile) mcpPost(ctx context.Context, what string, body io.Reader, size int64, want ...string) {
	r := h.postTo(ctx, h.client, what, h.mcp.url, "application/json", body, size,
		http.Header{"Accept": {"application/json, text/event-stream"}}, hostileBound)
	if r.ended != "phase ended" && !r.is(want...) {
		h.fail("%s: answered %s, want one of %q", what, r, want)
	}
}

// malformedMessages are messages no JSON-RPC 2.0 server may act on (issue
// 27, defect 7); each is answered with a JSON-RPC error, over HTTP with
// 400.
var malformedMessages = []struct{ what, body string }{
	{"invalid JSON", `{"jsonrpc":"2.0",`},
	{"an empty array", `[]`},
	{"a batch", "[" + listMessage + "," + listMessage + "]"},
	{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`},
	{"an object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`},
	{"a byte order mark", "\ufeff" + listMessage},
	{"a duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}`},
	{"a duplicate key", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}`},
	{"nesting 100000 deep", strings.Repeat("[", 100000) + strings.Repeat("]", 100000)},
}

const listMessage = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

// mcpMalformed sends the malformed messages to the listener: each must be
// answered 400.
func (h *hostile) mcpMalformed(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil {
		b := malformedMessages[rng.IntN(len(malformedMessages))]
		h.mcpPost(ctx, "mcp: "+b.what, strings.NewReader(b.body), int64(len(b.body)), "400")
	}
}

// mcpOversized sends tools/calls whose code is 100 MB, streamed and
// announced, 8 at once (issue 27, defect 6: eight of them held gigabytes):
// each must be answered 413, and the listener's memory come back (run).
func (h *hostile) mcpOversized(ctx context.Context, _ *rand.Rand) {
	const size = 100 << 20
	head := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_python","arguments":{"code":"`
	tail := `"}}}`
	body := func() io.Reader {
		return io.MultiReader(strings.NewReader(head), io.LimitReader(repeatReader('a'), size), strings.NewReader(tail))
	}
	// The listener closes the connection after its 413, with the rest of
	// the body unread; a client still sending when it does (scheduled
	// late on a loaded machine) may see the connection reset before it
	// reads the answer. That is counted, not failed; a listener that
	// went away is caught by the message sent after each round.
	tooLarge := []string{"413 request_too_large", "closed"}
	for ctx.Err() == nil {
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				if i%2 == 0 {
					h.mcpPost(ctx, "mcp: tools/call of 100 MB streamed, 8 at once", body(), -1, tooLarge...)
				} else {
					h.mcpPost(ctx, "mcp: tools/call of 100 MB announced, 8 at once", body(), int64(len(head)+size+len(tail)), tooLarge...)
				}
			})
		}
		wg.Wait()
		m := malformedMessages[0]
		h.mcpPost(ctx, "mcp: "+m.what+" after 8 bodies of 100 MB", strings.NewReader(m.body), int64(len(m.body)), "400")
	}
}

// measureProcess is the figures a process and its directories show
// without asking it.
func measureProcess(pid int, d dirs) (figures, error) {
	var f figures
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return f, err
	}
	for line := range strings.Lines(string(status)) {
		k, v, _ := strings.Cut(line, ":")
		n, _ := strconv.ParseInt(strings.Fields(v + " 0")[0], 10, 64)
		switch k {
		case "VmRSS":
			f.rss = n << 10
		case "Threads":
			f.threads = n
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return f, err
	}
	f.fds = int64(len(fds))
	f.dirs, f.spareDirs = listDirs(d.sessions)
	f.sessionDirs = int64(len(f.dirs))
	f.spoolFiles, f.spoolBytes = measure.DiskUse(d.tmp)
	if d.hibernate != "" {
		f.hibFiles, f.hibBytes = measure.DiskUse(d.hibernate)
	}
	return f, nil
}

package mcpserver_test

//lint:file-ignore SA1019 the tests check the log messages MCP deprecates from protocol 2026-07-28 on, which clients of the earlier versions use.

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"image/png"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/mcpserver"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/port/porttest"
)

// client is an MCP client of a server over p, through the SDK's own client
// over an in-memory transport.
type client struct {
	t  *testing.T
	cs *mcp.ClientSession

	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
	logs     []*mcp.LoggingMessageParams
	onNotify func(*mcp.ProgressNotificationParams) // called for each progress notification, if set
}

func connect(t *testing.T, p port.CodeExecutionPort, protocolVersion string) *client {
	t.Helper()
	ctx := context.Background()
	caps, err := p.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(p, caps, mcpserver.WithVersion("test"))
	c := &client{t: t}
	mc := mcp.NewClient(&mcp.Implementation{Name: "mcpserver-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, r.Params)
			f := c.onNotify
			c.mu.Unlock()
			if f != nil {
				f(r.Params)
			}
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			c.mu.Lock()
			c.logs = append(c.logs, r.Params)
			c.mu.Unlock()
		},
	})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.cs, err = mc.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.cs.Close()
		ss.Wait()
	})
	return c
}

// call calls a tool; the result's structured content is decoded into out
// when out is not nil.
func (c *client) call(name string, args map[string]any, out any) *mcp.CallToolResult {
	c.t.Helper()
	return c.callWith(&mcp.CallToolParams{Name: name, Arguments: args}, out)
}

func (c *client) callWith(params *mcp.CallToolParams, out any) *mcp.CallToolResult {
	c.t.Helper()
	// The first call of a test may wait for the runtime, for minutes on a
	// loaded machine: no deadline but the test binary's.
	ctx, cancel := testwait.Context(c.t)
	defer cancel()
	res, err := c.cs.CallTool(ctx, params)
	if err != nil {
		c.t.Fatalf("%s: %v", params.Name, err)
	}
	if out != nil && !res.IsError {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			c.t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s: structured content %s: %v", params.Name, b, err)
		}
	}
	return res
}

// text is the text content of a result.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

type execResult struct {
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	ReturnCode      int    `json:"return_code"`
	Outcome         string `json:"outcome"`
	StateLost       bool   `json:"state_lost"`
	OutputTruncated bool   `json:"output_truncated"`
	Files           []struct {
		FileID   string `json:"file_id"`
		Filename string `json:"filename"`
		URI      string `json:"uri"`
		MimeType string `json:"mime_type"`
		Size     int64  `json:"size"`
		Embedded bool   `json:"embedded"`
	} `json:"files"`
}

// settle waits until cond holds (called with c.mu held), or the test's
// wait ends; the caller then checks what it waited for. The SDK's client
// hands notifications to their handlers in order, but in a goroutine of
// its own: a result the server sent after them may reach its caller
// first.
func (c *client) settle(cond func() bool) {
	ctx, cancel := testwait.Context(c.t)
	defer cancel()
	_ = testwait.Poll(ctx, 5*time.Millisecond, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return cond()
	})
}

func (c *client) createSession() string {
	c.t.Helper()
	var s struct {
		SessionID string `json:"session_id"`
	}
	if res := c.call("create_session", nil, &s); res.IsError || s.SessionID == "" {
		c.t.Fatalf("create_session: %s", text(res))
	}
	return s.SessionID
}

func (c *client) run(sessionID, code string) (*mcp.CallToolResult, execResult) {
	c.t.Helper()
	args := map[string]any{"code": code}
	if sessionID != "" {
		args["session_id"] = sessionID
	}
	var out execResult
	res := c.call("run_python", args, &out)
	if res.IsError {
		c.t.Fatalf("run_python %q: %s", code, text(res))
	}
	return res, out
}

// The tools a model sees: run_python described by the purpose hint, the
// session tools, and bash and the editor because the wasm adapter offers
// them; the produced files' URI template.
func TestListsTools(t *testing.T) {
	p := wasmtest.New(t, nil)
	caps, err := p.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hint := binding.PurposeHint(caps)
	c := connect(t, p, "")
	ctx := context.Background()
	tools := map[string]*mcp.Tool{}
	for tool, err := range c.cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools[tool.Name] = tool
	}
	for _, name := range []string{"run_python", "create_session", "destroy_session", "bash", "text_editor"} {
		if tools[name] == nil || tools[name].Description == "" {
			t.Errorf("tool %s is missing or has no description", name)
		}
	}
	if len(tools) != 5 {
		t.Errorf("%d tools, want 5", len(tools))
	}
	if got := tools["run_python"].Description; got != hint {
		t.Errorf("run_python's description is not the purpose hint:\n%s\nwant\n%s", got, hint)
	}
	schema, _ := json.Marshal(tools["run_python"].InputSchema)
	for _, want := range []string{`"code"`, `"session_id"`, `"timeout_seconds"`, `"required":["code"]`} {
		if !bytes.Contains(schema, []byte(want)) {
			t.Errorf("run_python's input schema lacks %s: %s", want, schema)
		}
	}
	var templates []string
	for rt, err := range c.cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		templates = append(templates, rt.URITemplate)
	}
	if len(templates) != 1 || templates[0] != "codeport://sessions/{session_id}/outputs/{file_id}" {
		t.Errorf("resource templates %q", templates)
	}
}

// Without a bash tool in the port, there is none in the server; the hint
// the port gives is the description as it is.
func TestToolsFollowTheCapabilities(t *testing.T) {
	p := porttest.New(porttest.WithExecutor(func(context.Context, porttest.Session, port.ExecuteRequest) (port.Result, error) {
		return port.Result{Stdout: "ok\n"}, nil
	}, port.ToolCodeExecution))
	t.Cleanup(func() { p.Close() })
	caps, err := p.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	caps.PurposeHint = "Runs Python for the test."
	srv := mcpserver.New(p, caps)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Wait()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		if tool.Name == "run_python" && tool.Description != caps.PurposeHint {
			t.Errorf("run_python: %q", tool.Description)
		}
	}
	if strings.Join(names, " ") != "create_session destroy_session run_python text_editor" {
		t.Errorf("tools %q", names)
	}
}

// State persists through a session: its variables and its files, across
// run_python, bash and the editor; it ends with destroy_session.
func TestStatefulSession(t *testing.T) {
	for _, version := range []string{"", "2025-06-18"} {
		t.Run("protocol="+version, func(t *testing.T) {
			c := connect(t, wasmtest.New(t, nil), version)
			id := c.createSession()
			if _, out := c.run(id, "x = 41"); out.Outcome != "completed" || out.ReturnCode != 0 {
				t.Fatalf("x = 41: %+v", out)
			}
			res, out := c.run(id, "print(x + 1)")
			if out.Stdout != "42\n" || out.Outcome != "completed" || text(res) != "stdout:\n42\nreturn_code: 0" {
				t.Fatalf("print(x + 1): %+v\n%s", out, text(res))
			}

			var ed execResult
			if res := c.call("text_editor", map[string]any{"session_id": id, "command": "create", "path": "notes.txt", "file_text": "hello\n"}, &ed); res.IsError || ed.ReturnCode != 0 {
				t.Fatalf("editor create: %s", text(res))
			}
			var sh execResult
			if res := c.call("bash", map[string]any{"session_id": id, "command": "cat notes.txt | tr a-z A-Z"}, &sh); res.IsError || sh.Stdout != "HELLO\n" {
				t.Fatalf("bash: %s %+v", text(res), sh)
			}
			if _, out := c.run(id, "print(open('notes.txt').read().strip(), x)"); out.Stdout != "hello 41\n" {
				t.Fatalf("python after the editor: %+v", out)
			}

			var d struct {
				Destroyed bool `json:"destroyed"`
			}
			if res := c.call("destroy_session", map[string]any{"session_id": id}, &d); res.IsError || !d.Destroyed {
				t.Fatalf("destroy_session: %s", text(res))
			}
			res = c.call("run_python", map[string]any{"code": "print(x)", "session_id": id}, nil)
			if !res.IsError || !strings.Contains(text(res), "create_session") {
				t.Fatalf("a destroyed session: %v %s", res.IsError, text(res))
			}
		})
	}
}

// A program's failure is a result, not a tool error: the text says what
// happened, as gateway/responses words it.
func TestProgramErrorsAreResults(t *testing.T) {
	c := connect(t, wasmtest.New(t, nil), "")
	res, out := c.run("", "1/0")
	if res.IsError || out.Outcome != "program_error" || out.ReturnCode != 1 || !strings.Contains(out.Stderr, "ZeroDivisionError") {
		t.Fatalf("1/0: %+v", out)
	}
	if !strings.Contains(text(res), "note: The program raised an error") {
		t.Errorf("text: %s", text(res))
	}
	var to execResult
	res = c.call("run_python", map[string]any{"code": "while True: pass", "timeout_seconds": 0.5}, &to)
	if res.IsError || to.Outcome != "timed_out" || to.ReturnCode != 124 || !to.StateLost || !strings.Contains(text(res), "timed out") {
		t.Fatalf("timeout: %v %+v %s", res.IsError, to, text(res))
	}
}

// A produced file comes back embedded and as a resource that
// resources/read gives the bytes of; a binary one as a blob; one too large
// to embed as a link to the resource.
func TestProducedFiles(t *testing.T) {
	c := connect(t, wasmtest.New(t, nil), "")
	ctx := context.Background()
	id := c.createSession()
	code := "open('out.csv', 'w').write('a,b\\n1,2\\n')\n" +
		"open('raw.bin', 'wb').write(bytes(range(256)))\n" +
		"open('big.txt', 'w').write('x' * (2 << 20))"
	res, out := c.run(id, code)
	if len(out.Files) != 3 {
		t.Fatalf("files %+v", out.Files)
	}
	embedded := map[string]*mcp.ResourceContents{}
	var links []*mcp.ResourceLink
	for _, content := range res.Content {
		switch x := content.(type) {
		case *mcp.EmbeddedResource:
			embedded[x.Resource.URI] = x.Resource
		case *mcp.ResourceLink:
			links = append(links, x)
		}
	}
	csv, bin, big := out.Files[0], out.Files[1], out.Files[2]
	if csv.Filename != "out.csv" || !csv.Embedded || csv.URI == "" || !strings.HasPrefix(csv.URI, "codeport://sessions/") {
		t.Fatalf("out.csv: %+v", csv)
	}
	if e := embedded[csv.URI]; e == nil || e.Text != "a,b\n1,2\n" || !strings.HasPrefix(e.MIMEType, "text/csv") {
		t.Fatalf("embedded out.csv: %+v", e)
	}
	if e := embedded[bin.URI]; e == nil || !bytes.Equal(e.Blob, func() []byte {
		b := make([]byte, 256)
		for i := range b {
			b[i] = byte(i)
		}
		return b
	}()) || e.Text != "" {
		t.Fatalf("embedded raw.bin: %+v", e)
	}
	if big.Embedded || big.Size != 2<<20 || len(links) != 1 || links[0].URI != big.URI || !strings.Contains(text(res), "too large to embed") {
		t.Fatalf("big.txt: %+v %+v\n%s", big, links, text(res))
	}

	// Read back: the version the call produced, even after it changed.
	c.run(id, "open('out.csv', 'w').write('changed')")
	rr, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: csv.URI})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != "a,b\n1,2\n" || rr.Contents[0].URI != csv.URI {
		t.Fatalf("resources/read out.csv: %+v", rr.Contents)
	}
	rr, err = c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: big.URI})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != strings.Repeat("x", 2<<20) {
		t.Fatalf("resources/read big.txt: %d contents", len(rr.Contents))
	}

	// Unknown versions and sessions are not found.
	for _, uri := range []string{
		"codeport://sessions/" + id + "/outputs/nope",
		"codeport://sessions/nope/outputs/" + csv.FileID,
		"codeport://sessions/" + id + "/files/" + csv.FileID,
	} {
		if _, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("resources/read %s: %v", uri, err)
		}
	}
}

// A call without a session runs in one of its own, which is gone after
// it: the port's only session slot is free for the next call each time.
// Its small files are embedded before it goes, its large ones named.
func TestSessionlessCallLeavesNoSession(t *testing.T) {
	p := wasmtest.New(t, func(c wasm.Config) wasm.Config { return c.WithMaxSessions(1) })
	c := connect(t, p, "")
	for i := range 3 {
		res, out := c.run("", "open('r.txt', 'w').write('result')\nprint(6 * 7)")
		if out.Stdout != "42\n" || len(out.Files) != 1 || !out.Files[0].Embedded || out.Files[0].URI != "" {
			t.Fatalf("call %d: %+v", i, out)
		}
		var got string
		for _, content := range res.Content {
			if e, ok := content.(*mcp.EmbeddedResource); ok {
				got = e.Resource.Text
			}
		}
		if got != "result" {
			t.Fatalf("call %d: embedded %q", i, got)
		}
	}
	res, out := c.run("", "open('big.txt', 'w').write('x' * (2 << 20))")
	if len(out.Files) != 1 || out.Files[0].Embedded || !strings.Contains(text(res), "big.txt (2MiB)") {
		t.Fatalf("a large file: %+v\n%s", out, text(res))
	}
	id := c.createSession() // the slot is free
	c.call("destroy_session", map[string]any{"session_id": id}, nil)
}

// Output reaches the client as progress notifications while the call
// runs: the cell waits for a file the test writes only when the first
// notification has arrived, so the call can end only if it did. With a log
// level set, the output also comes as log messages.
func TestStreamsOutput(t *testing.T) {
	for _, version := range []string{"", "2025-06-18"} {
		t.Run("protocol="+version, func(t *testing.T) {
			p := wasmtest.New(t, nil)
			c := connect(t, p, version)
			id := c.createSession()
			ctx := context.Background()
			meta := mcp.Meta{"progressToken": "tok-1"}
			if version == "" {
				meta[mcp.MetaKeyLogLevel] = "info"
			} else if err := c.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
				t.Fatal(err)
			}
			var once sync.Once
			put := make(chan error, 1)
			c.onNotify = func(*mcp.ProgressNotificationParams) {
				once.Do(func() {
					_, err := p.PutFile(ctx, id, "go", strings.NewReader("go"))
					put <- err
				})
			}
			code := "import os, sys, time\nprint('first', flush=True)\n" +
				"deadline = time.time() + 60\n" +
				"while not os.path.exists('go') and time.time() < deadline:\n    time.sleep(0.01)\n" +
				"print('warn', file=sys.stderr)\nprint('found' if os.path.exists('go') else 'never')"
			var out execResult
			res := c.callWith(&mcp.CallToolParams{Meta: meta, Name: "run_python", Arguments: map[string]any{"code": code, "session_id": id}}, &out)
			if res.IsError || out.Stdout != "first\nfound\n" || out.Stderr != "warn\n" {
				t.Fatalf("%v %+v", res.IsError, out)
			}
			if err := <-put; err != nil {
				t.Fatal(err)
			}
			c.settle(func() bool {
				n := 0
				for _, p := range c.progress {
					n += len(p.Message)
				}
				logged := 0
				for _, l := range c.logs {
					s, _ := l.Data.(string)
					logged += len(s)
				}
				return n >= len(out.Stdout+out.Stderr) && logged >= n
			})
			c.mu.Lock()
			defer c.mu.Unlock()
			var streamed strings.Builder
			last := 0.0
			for _, n := range c.progress {
				if n.ProgressToken != "tok-1" || n.Progress <= last {
					t.Errorf("notification %+v after progress %v", n, last)
				}
				last = n.Progress
				streamed.WriteString(n.Message)
			}
			if got := streamed.String(); got != "first\nwarn\nfound\n" && got != "first\nfound\nwarn\n" {
				t.Errorf("progress messages add up to %q", got)
			}
			var stdout, stderr strings.Builder
			for _, l := range c.logs {
				s, _ := l.Data.(string)
				switch {
				case l.Logger == "stdout" && l.Level == "info":
					stdout.WriteString(s)
				case l.Logger == "stderr" && l.Level == "warning":
					stderr.WriteString(s)
				default:
					t.Errorf("log message %+v", l)
				}
			}
			if stdout.String() != out.Stdout || stderr.String() != out.Stderr {
				t.Errorf("log messages add up to %q and %q", stdout.String(), stderr.String())
			}
		})
	}
}

// Bad input is a tool error the model can read, never a crash; the server
// goes on.
func TestBadInputsAreToolErrors(t *testing.T) {
	c := connect(t, wasmtest.New(t, nil), "")
	id := c.createSession()
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"run_python", map[string]any{}, "code"},
		{"run_python", map[string]any{"code": ""}, "code"},
		{"run_python", map[string]any{"code": "  \n"}, "code is empty"},
		{"run_python", map[string]any{"code": 1}, "code"},
		{"run_python", map[string]any{"code": "1", "timeout_seconds": -1}, "timeout_seconds"},
		{"run_python", map[string]any{"code": "1", "session_id": "no-such-session"}, "create_session"},
		{"run_python", map[string]any{"code": "1", "session_id": "a b\n"}, "not a session id"},
		{"run_python", map[string]any{"code": "1", "session_id": strings.Repeat("s", 300)}, "not a session id"},
		{"run_python", map[string]any{"code": "1", "extra": true}, "extra"},
		{"run_python", map[string]any{"code": strings.Repeat("#", 2<<20)}, "limit"},
		{"bash", map[string]any{"command": ""}, "command"},
		{"text_editor", map[string]any{"command": "delete", "path": "x", "session_id": id}, "command"},
		{"text_editor", map[string]any{"command": "view", "path": "x", "view_range": []int{1, 2, 3}, "session_id": id}, "view_range"},
		{"text_editor", map[string]any{"command": "view", "path": "../../etc/passwd", "session_id": id}, "workspace"},
		{"destroy_session", map[string]any{}, "session_id"},
		{"create_session", map[string]any{"idle_timeout_seconds": -5}, "idle_timeout_seconds"},
	} {
		res := c.call(tc.tool, tc.args, nil)
		msg := text(res)
		if !res.IsError && !(tc.tool == "text_editor" && strings.Contains(msg, "Error")) {
			t.Errorf("%s %v: not an error: %s", tc.tool, tc.args, msg)
			continue
		}
		if !strings.Contains(msg, tc.want) || len(msg) > 1000 {
			t.Errorf("%s %v: %q lacks %q", tc.tool, tc.args, msg, tc.want)
		}
	}
	if _, out := c.run(id, "print('still serving')"); out.Stdout != "still serving\n" {
		t.Fatalf("after the errors: %+v", out)
	}
}

// A session runs one call at a time: a second call while one runs is a
// tool error saying so.
func TestBusySession(t *testing.T) {
	p := wasmtest.New(t, nil)
	c := connect(t, p, "")
	id := c.createSession()
	started := make(chan struct{})
	var once sync.Once
	c.onNotify = func(*mcp.ProgressNotificationParams) { once.Do(func() { close(started) }) }
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		code := "import os, time\nprint('waiting', flush=True)\ndeadline = time.time() + 60\nwhile not os.path.exists('go') and time.time() < deadline:\n    time.sleep(0.01)"
		res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Meta: mcp.Meta{"progressToken": 1}, Name: "run_python", Arguments: map[string]any{"code": code, "session_id": id}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	<-started
	res := c.call("run_python", map[string]any{"code": "1", "session_id": id}, nil)
	if !res.IsError || !strings.Contains(text(res), "running another call") {
		t.Errorf("a second call: %v %s", res.IsError, text(res))
	}
	if _, err := p.PutFile(context.Background(), id, "go", strings.NewReader("")); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res == nil || res.IsError {
		t.Fatalf("the first call: %+v", res)
	}
}

// A PNG a cell writes is an ImageContent, the bytes it wrote; a file that
// only has a PNG's name is an embedded resource, as any file is.
func TestImagesAreImageContent(t *testing.T) {
	c := connect(t, wasmtest.New(t, nil), "")
	code := "import struct, zlib\n" +
		"def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))\n" +
		"rows = b''.join(b'\\x00' + bytes(range(y, y + 9)) for y in range(2))\n" +
		"png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 3, 2, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b'')\n" +
		"open('chart.png', 'wb').write(png)\n" +
		"open('fake.png', 'w').write('text')\n" +
		"print(png.hex())"
	res, out := c.run("", code)
	want, err := hex.DecodeString(strings.TrimSpace(out.Stdout))
	if err != nil || len(out.Files) != 2 {
		t.Fatalf("%+v", out)
	}
	var images []*mcp.ImageContent
	var resources []string
	for _, content := range res.Content {
		switch x := content.(type) {
		case *mcp.ImageContent:
			images = append(images, x)
		case *mcp.EmbeddedResource:
			resources = append(resources, string(x.Resource.Blob))
		}
	}
	if len(images) != 1 || images[0].MIMEType != "image/png" || !bytes.Equal(images[0].Data, want) {
		t.Fatalf("images %+v", images)
	}
	if img, err := png.Decode(bytes.NewReader(images[0].Data)); err != nil || img.Bounds().Dx() != 3 {
		t.Errorf("the image does not decode: %v", err)
	}
	if len(resources) != 1 || resources[0] != "text" || out.Files[1].Filename != "fake.png" || !out.Files[1].Embedded {
		t.Errorf("fake.png: %q; files %+v", resources, out.Files)
	}
}

package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
	"github.com/codeport/codeport/telemetry"
)

// These tests serve the real in-process adapter over HTTP, as `codeport
// serve` does, and check the contract end to end: status codes, bodies
// (each validated against openapi.yaml by the harness) and behaviour.

func newWasmHarness(t *testing.T, tweak func(wasm.Config) wasm.Config) *harness {
	t.Helper()
	reg := prometheus.NewRegistry()
	calls, err := telemetry.NewObserver(reg)
	if err != nil {
		t.Fatal(err)
	}
	a := wasmtest.New(t, func(c wasm.Config) wasm.Config {
		c = c.WithMetrics(reg)
		if tweak != nil {
			c = tweak(c)
		}
		return c
	}, port.WithObserver(calls))
	return servePort(t, a, server.WithReady(a.Ready), server.WithGatherer(reg))
}

func (h *harness) createSession(body string) string {
	h.t.Helper()
	r := h.do("POST", "/sessions", body)
	if r.status != http.StatusCreated {
		h.t.Fatalf("create: %d %s", r.status, r.body)
	}
	var s contract.SessionHandle
	r.json(h.t, &s)
	return s.SessionID
}

func (h *harness) exec(id, body string) (response, contract.ExecResponse) {
	h.t.Helper()
	r := h.do("POST", "/sessions/"+id+"/exec", body)
	var out contract.ExecResponse
	if r.status == http.StatusOK {
		r.json(h.t, &out)
	}
	return r, out
}

func code(src string, timeout int) string {
	b, _ := json.Marshal(map[string]any{"tool": "code_execution", "input": map[string]string{"code": src}})
	if timeout > 0 {
		b, _ = json.Marshal(map[string]any{"tool": "code_execution", "input": map[string]string{"code": src}, "timeout_seconds": timeout})
	}
	return string(b)
}

func editor(input map[string]any) string {
	b, _ := json.Marshal(map[string]any{"tool": "text_editor_code_execution", "input": input})
	return string(b)
}

func TestEndToEndSessionsAndState(t *testing.T) {
	h := newWasmHarness(t, nil)
	if r := h.do("GET", "/healthz", ""); r.status != http.StatusOK {
		t.Fatalf("healthz %d", r.status)
	}
	s1 := h.createSession(`{"idle_timeout_seconds": 60}`)
	s2 := h.createSession("")
	if _, out := h.exec(s1, code("x = 40", 0)); out.ResultBlock.Content.ReturnCode != 0 {
		t.Fatalf("%+v", out)
	}
	raw, out := h.exec(s1, `{"tool":"code_execution","input":{"code":"print(x + 2)"},"tool_use_id":"toolu_mine"}`)
	// The document requires only the contract's fields; codeport always
	// sends its own additions too.
	for _, key := range []string{`"execution_time_ms":`, `"outcome":`, `"output_truncated":`, `"state_lost":`} {
		if !strings.Contains(string(raw.body), key) {
			t.Errorf("exec response lacks %s: %s", key, raw.body)
		}
	}
	if out.ResultBlock.Content.Stdout != "42\n" || out.ToolUseID != "toolu_mine" || out.ResultBlock.ToolUseID != "toolu_mine" ||
		out.ResultBlock.Type != "code_execution_tool_result" || out.Outcome != "completed" {
		t.Fatalf("state across calls: %+v", out)
	}
	_, out = h.exec(s2, code("print(x)", 0))
	if out.ResultBlock.Content.ReturnCode != 1 || !strings.Contains(out.ResultBlock.Content.Stderr, "NameError") || out.Outcome != "program_error" {
		t.Fatalf("fresh session: %+v", out)
	}
	for _, s := range []string{s1, s1, "never-existed"} {
		if r := h.do("DELETE", "/sessions/"+s, ""); r.status != http.StatusNoContent {
			t.Fatalf("delete %s: %d", s, r.status)
		}
	}
	if r, _ := h.exec(s1, code("print(1)", 0)); r.status != http.StatusNotFound {
		t.Fatalf("exec in a destroyed session: %d", r.status)
	}
}

func TestEndToEndRefusals(t *testing.T) {
	h := newWasmHarness(t, func(c wasm.Config) wasm.Config { return c.WithMaxSessions(2).WithRetryAfter(2 * time.Second) })
	id := h.createSession("")
	cases := []struct {
		name, method, target, body string
		want                       int
	}{
		{"unknown tool", "POST", "/sessions/" + id + "/exec", `{"tool":"fortran_execution","input":{"code":"x"}}`, 400},
		{"missing code", "POST", "/sessions/" + id + "/exec", `{"tool":"code_execution","input":{}}`, 422},
		{"malformed json", "POST", "/sessions/" + id + "/exec", `{"tool":`, 422},
		{"zero timeout", "POST", "/sessions/" + id + "/exec", `{"tool":"code_execution","input":{"code":"1"},"timeout_seconds":0}`, 422},
		{"editor without file_text", "POST", "/sessions/" + id + "/exec", editor(map[string]any{"command": "create", "path": "a.txt"}), 422},
		{"exec unknown session", "POST", "/sessions/nope/exec", code("1", 0), 404},
		{"list unknown session", "GET", "/sessions/nope/files/list", "", 404},
		{"get unknown session", "GET", "/sessions/nope/files?path=a", "", 404},
		{"missing file", "GET", "/sessions/" + id + "/files?path=absent.txt", "", 404},
		{"bad lifetime hint", "POST", "/sessions", `{"max_lifetime_seconds": -5}`, 422},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if r := h.do(c.method, c.target, c.body); r.status != c.want {
				t.Fatalf("status %d, want %d: %s", r.status, c.want, r.body)
			}
		})
	}
	h.createSession("")
	r := h.do("POST", "/sessions", "")
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "2" {
		t.Fatalf("at capacity: %d Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
}

func TestEndToEndFilesAndConfinement(t *testing.T) {
	h := newWasmHarness(t, func(c wasm.Config) wasm.Config { return c.WithFileLimit(1 << 10) })
	id := h.createSession("")
	upload := func(dest, name, content string) response {
		t.Helper()
		body, ct := multipartBody(t, dest, name, content)
		req, _ := http.NewRequest("POST", h.srv.URL+"/sessions/"+id+"/files", body)
		req.Header.Set("Content-Type", ct)
		return h.send(req)
	}
	if r := upload("in/data.txt", "ignored.txt", "from the client"); r.status != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	if r := upload("", "named.txt", "by filename"); r.status != http.StatusCreated {
		t.Fatalf("upload by filename: %d %s", r.status, r.body)
	}
	if r := upload("big.bin", "big.bin", strings.Repeat("x", 2<<10)); r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized upload: %d", r.status)
	}
	_, out := h.exec(id, code("print(open('in/data.txt').read(), open('named.txt').read())\n_ = open('out.csv', 'w').write('a,b\\n')", 0))
	if out.ResultBlock.Content.Stdout != "from the client by filename\n" {
		t.Fatalf("python reads uploads: %+v", out.ResultBlock.Content)
	}
	r := h.do("GET", "/sessions/"+id+"/files/list?path=.", "")
	var list contract.FileList
	r.json(t, &list)
	var paths []string
	for _, f := range list.Files {
		paths = append(paths, f.Path)
	}
	if strings.Join(paths, " ") != "in named.txt out.csv" {
		t.Fatalf("list: %v", paths)
	}
	if r := h.do("GET", "/sessions/"+id+"/files?path=out.csv", ""); r.status != 200 || string(r.body) != "a,b\n" {
		t.Fatalf("get: %d %q", r.status, r.body)
	}
	if r := h.do("GET", "/sessions/"+id+"/files?path=in", ""); r.status != http.StatusBadRequest {
		t.Fatalf("get a directory: %d", r.status)
	}
	for _, p := range []string{"../secret", "/etc/passwd", "/workspace/../../etc/passwd", "in/../../x"} {
		q := "/sessions/" + id + "/files?path=" + urlQuery(p)
		if r := h.do("GET", q, ""); r.status != http.StatusForbidden {
			t.Errorf("get %q: %d", p, r.status)
		}
		if r := h.do("GET", "/sessions/"+id+"/files/list?path="+urlQuery(p), ""); r.status != http.StatusForbidden {
			t.Errorf("list %q: %d", p, r.status)
		}
		if r := upload(p, "x.txt", "x"); r.status != http.StatusForbidden {
			t.Errorf("put %q: %d", p, r.status)
		}
		_, out := h.exec(id, editor(map[string]any{"command": "view", "path": p}))
		if out.ResultBlock.Content.ReturnCode == 0 || !strings.Contains(out.ResultBlock.Content.Stderr, "outside") {
			t.Errorf("editor view %q: %+v", p, out.ResultBlock.Content)
		}
		_, out = h.exec(id, editor(map[string]any{"command": "create", "path": p, "file_text": "x"}))
		if out.ResultBlock.Content.ReturnCode == 0 {
			t.Errorf("editor create %q succeeded", p)
		}
	}
	_, out = h.exec(id, code("import os\ntry:\n    print(open('/etc/passwd').read())\nexcept OSError as e:\n    print('denied')\nprint(sorted(os.environ))", 0))
	if out.ResultBlock.Content.Stdout != "denied\n['HOME', 'LANG', 'TMPDIR']\n" {
		t.Fatalf("containment: %+v", out.ResultBlock.Content)
	}
}

// TestEndToEndUploadFileBeforePath: curl -F file=@x -F path=y sends the
// file part before the path part; the upload lands at the path. A file
// over the runtime's file limit sent that way is refused (413) as it
// arrives, not once the server has read it all, and leaves nothing in
// the workspace. No spool file outlives a request.
func TestEndToEndUploadFileBeforePath(t *testing.T) {
	const fileLimit = 64 << 10
	h := newWasmHarness(t, func(c wasm.Config) wasm.Config { return c.WithFileLimit(fileLimit) })
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the server spools
	id := h.createSession("")
	spoolsLeft := func() []string {
		t.Helper()
		left, _ := filepath.Glob(filepath.Join(tmp, "codeport-upload-*"))
		return left
	}

	body, ct := uploadBody(t, part{"file", "x.csv", "a,b\n1,2\n"}, part{"path", "", "in/y.csv"})
	req := httptest.NewRequest("POST", "/sessions/"+id+"/files", body)
	req.Header.Set("Content-Type", ct)
	r := h.serve(req)
	var res contract.FileUploadResult
	if r.status != http.StatusCreated {
		t.Fatalf("file, then path: %d %s", r.status, r.body)
	}
	if r.json(t, &res); res != (contract.FileUploadResult{Path: "in/y.csv", SizeBytes: 8}) {
		t.Errorf("file, then path: %+v", res)
	}
	if _, out := h.exec(id, code("import os\nprint(repr(open('in/y.csv').read()), os.path.exists('x.csv'))", 0)); out.ResultBlock.Content.Stdout != "'a,b\\n1,2\\n' False\n" {
		t.Errorf("python reads the upload: %+v", out.ResultBlock.Content)
	}
	if left := spoolsLeft(); len(left) != 0 {
		t.Errorf("spool files left behind: %v", left)
	}

	// 16 MiB of file, then a path: refused within the limit's reach.
	head := "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n\r\n"
	tail := "\r\n--b\r\nContent-Disposition: form-data; name=\"path\"\r\n\r\nin/big.bin\r\n--b--\r\n"
	counted := &countingReader{r: io.MultiReader(strings.NewReader(head), io.LimitReader(zeros{}, 16<<20), strings.NewReader(tail))}
	req = httptest.NewRequest("POST", "/sessions/"+id+"/files", counted)
	req.ContentLength = -1
	req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
	if r := h.serve(req); r.status != http.StatusRequestEntityTooLarge || r.code(t) != "file_too_large" {
		t.Errorf("over the limit, file first: %d %s", r.status, r.body)
	}
	if got := counted.n.Load(); got > fileLimit+64<<10 {
		t.Errorf("the server read %d bytes of the body before refusing a file over %d", got, fileLimit)
	}
	if _, out := h.exec(id, code("import os\nprint(os.path.exists('in/big.bin'), os.path.exists('big.bin'))", 0)); out.ResultBlock.Content.Stdout != "False False\n" {
		t.Errorf("a refused upload was written: %+v", out.ResultBlock.Content)
	}
	if left := spoolsLeft(); len(left) != 0 {
		t.Errorf("spool files left behind: %v", left)
	}
}

func TestEndToEndEditor(t *testing.T) {
	h := newWasmHarness(t, nil)
	id := h.createSession("")
	steps := []struct {
		input  map[string]any
		rc     int
		stdout string // substring
	}{
		{map[string]any{"command": "create", "path": "app.py", "file_text": "def f():\n    return 1\n"}, 0, ""},
		{map[string]any{"command": "create", "path": "app.py", "file_text": "again"}, 1, ""},
		{map[string]any{"command": "str_replace", "path": "app.py", "old_str": "return 1", "new_str": "return 41"}, 0, ""},
		{map[string]any{"command": "str_replace", "path": "app.py", "old_str": "absent", "new_str": "x"}, 1, ""},
		{map[string]any{"command": "insert", "path": "app.py", "insert_line": 2, "new_str": "print(f() + 1)"}, 0, ""},
		{map[string]any{"command": "insert", "path": "app.py", "insert_line": 99, "new_str": "x"}, 1, ""},
		{map[string]any{"command": "view", "path": "app.py", "view_range": []int{3, -1}}, 0, "3\tprint(f() + 1)"},
		{map[string]any{"command": "view", "path": "app.py", "view_range": []int{5, 9}}, 1, ""},
		{map[string]any{"command": "view", "path": "."}, 0, "app.py"},
	}
	for i, s := range steps {
		r, out := h.exec(id, editor(s.input))
		c := out.ResultBlock.Content
		if r.status != 200 || c.ReturnCode != s.rc || !strings.Contains(c.Stdout, s.stdout) || out.ResultBlock.Type != "text_editor_code_execution_tool_result" {
			t.Fatalf("step %d %v: status %d %+v", i, s.input, r.status, c)
		}
		if s.rc != 0 && c.Stderr == "" {
			t.Fatalf("step %d: an editor error must say what went wrong", i)
		}
	}
	if _, out := h.exec(id, code("exec(open('app.py').read())", 0)); out.ResultBlock.Content.Stdout != "42\n" {
		t.Fatalf("run edited file: %+v", out.ResultBlock.Content)
	}
	h.exec(id, editor(map[string]any{"command": "undo_edit", "path": "app.py"}))
	if _, out := h.exec(id, code("print(open('app.py').read(), end='')", 0)); out.ResultBlock.Content.Stdout != "def f():\n    return 41\n" {
		t.Fatalf("after undo: %q", out.ResultBlock.Content.Stdout)
	}
}

func TestEndToEndLimits(t *testing.T) {
	h := newWasmHarness(t, func(c wasm.Config) wasm.Config { return c.WithMemoryLimit(64 << 20) })
	id := h.createSession("")
	_, out := h.exec(id, code("print('before', flush=True)\nwhile True:\n    pass", 1))
	if out.Outcome != "timed_out" || !out.StateLost || out.ResultBlock.Content.Stdout != "before\n" || out.ResultBlock.Content.ReturnCode != 124 {
		t.Fatalf("timeout: %+v", out)
	}
	_, out = h.exec(id, code("for _ in range(50):\n    print('y' * 1_000_000)", 0))
	if !out.OutputTruncated || len(out.ResultBlock.Content.Stdout) > 1<<20+200 {
		t.Fatalf("truncation: truncated=%v len=%d", out.OutputTruncated, len(out.ResultBlock.Content.Stdout))
	}
	_, out = h.exec(id, code("import os\nos.write(1, b'\\x00\\xff\\xfe R\\x00\\x00\\x00\\x00\\x00')", 0))
	if out.ResultBlock.Content.ReturnCode != 0 {
		t.Fatalf("raw bytes: %+v", out)
	}
	if _, out = h.exec(id, code("print('next')", 0)); out.ResultBlock.Content.Stdout != "next\n" {
		t.Fatalf("after raw bytes: %+v", out)
	}
	_, out = h.exec(h.createSession(""), code("a = []\nwhile True:\n    a.append(bytearray(1 << 20))", 0))
	if out.Outcome != "memory_limit" {
		t.Fatalf("memory bomb: %+v", out)
	}
	if _, out = h.exec(h.createSession(""), code("print('still serving')", 0)); out.ResultBlock.Content.Stdout != "still serving\n" {
		t.Fatalf("after memory bomb: %+v", out)
	}

	// A concurrent second call on one session is refused with 409. The
	// long call lasts until then (its client goes away, which cancels
	// it), not for a time a loaded machine may take to get there.
	long, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	wg.Go(func() {
		// The prober below may hold the session for a moment: retry
		// until the long call itself is admitted.
		for long.Err() == nil {
			req, _ := http.NewRequestWithContext(long, "POST", h.srv.URL+"/sessions/"+id+"/exec", strings.NewReader(code("import time\ntime.sleep(1000)", 300)))
			req.Header.Set("Content-Type", "application/json")
			if h.auth != "" {
				req.Header.Set("Authorization", h.auth)
			}
			resp, err := h.srv.Client().Do(req)
			if err != nil {
				return // cancelled
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusConflict {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	testwait.For(t, "a second call refused as busy", func() bool {
		return h.do("POST", "/sessions/"+id+"/exec", code("print(1)", 0)).status == http.StatusConflict
	})
	stop()
	wg.Wait()

	r := h.do("GET", "/metrics", "")
	for _, m := range []string{"codeport_sessions_live", "codeport_executions_total", "codeport_execution_duration_seconds", "codeport_instance_start_duration_seconds"} {
		if !strings.Contains(string(r.body), m) {
			t.Errorf("metrics lack %s", m)
		}
	}
	r = h.do("GET", "/capabilities", "")
	var caps contract.Capabilities
	r.json(t, &caps)
	if caps.Backend != "wasm" || caps.Limits.MemoryBytes != 64<<20 || caps.Network {
		t.Fatalf("capabilities: %+v", caps)
	}
}

func urlQuery(s string) string {
	return strings.NewReplacer("%", "%25", "&", "%26", "+", "%2B", " ", "%20", "#", "%23", "?", "%3F").Replace(s)
}

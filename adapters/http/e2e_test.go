package httpadapter_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
)

// These tests drive the adapter against what `codeport serve` runs: the
// in-process wasm adapter behind server.NewHandler, on a real HTTP server
// on loopback.

// serveWasm starts a wasm backend served over contract v1 and returns its
// base URL.
func serveWasm(t *testing.T, tweak func(wasm.Config) wasm.Config, opts ...server.Option) string {
	t.Helper()
	w := wasmtest.New(t, tweak)
	srv := httptest.NewServer(server.NewHandler(w, opts...))
	t.Cleanup(srv.Close)
	return srv.URL
}

func newAdapter(t *testing.T, cfg httpadapter.Config) *port.Port {
	t.Helper()
	a, err := httpadapter.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

func create(t *testing.T, a *port.Port) string {
	t.Helper()
	s, err := a.CreateSession(context.Background(), port.CreateSessionRequest{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return s.ID
}

func run(t *testing.T, a *port.Port, id, code string) port.Result {
	t.Helper()
	res, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code})
	if err != nil {
		t.Fatalf("execute %q: %v", code, err)
	}
	return res
}

func wantErr(t *testing.T, what string, err, sentinel error) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("%s: got %v, want %v", what, err, sentinel)
	}
}

func ptr[T any](v T) *T { return &v }

func TestRemoteSessionsAndState(t *testing.T) {
	a := newAdapter(t, httpadapter.NewConfig(serveWasm(t, nil)))
	ctx := context.Background()

	s, err := a.CreateSession(ctx, port.CreateSessionRequest{IdleTimeout: 90 * time.Second, MaxLifetime: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID == "" || s.IdleTimeout != 90*time.Second || s.MaxLifetime != 2*time.Second || s.CreatedAt.IsZero() {
		t.Fatalf("handle: %+v", s)
	}
	if _, err := a.CreateSession(ctx, port.CreateSessionRequest{IdleTimeout: -1}); !errors.Is(err, port.ErrInvalidRequest) {
		t.Fatalf("negative hint: %v", err)
	}
	id := create(t, a)
	other := create(t, a)

	if res := run(t, a, id, "x = 40"); res.Outcome != port.OutcomeCompleted || res.ReturnCode != 0 {
		t.Fatalf("assign: %+v", res)
	}
	res, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(x + 2)", ToolUseID: "toolu_mine", Timeout: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "42\n" || res.ToolUseID != "toolu_mine" || res.Tool != port.ToolCodeExecution || res.Outcome != port.OutcomeCompleted {
		t.Fatalf("state across calls: %+v", res)
	}
	res = run(t, a, other, "print(x)")
	if res.ReturnCode != 1 || !strings.Contains(res.Stderr, "NameError") || res.Outcome != port.OutcomeProgramError || res.ToolUseID == "" {
		t.Fatalf("fresh session: %+v", res)
	}
	res = run(t, a, id, "raise SystemExit(3)")
	if res.ReturnCode != 3 || res.Outcome != port.OutcomeProgramError {
		t.Fatalf("exit code: %+v", res)
	}

	// Refusals by the backend.
	_, err = a.Execute(ctx, id, port.ExecuteRequest{Tool: "fortran_execution", Code: "print *, 1"})
	wantErr(t, "unknown tool kind", err, port.ErrUnsupportedTool)
	_, err = a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution})
	wantErr(t, "empty code", err, port.ErrInvalidRequest)
	_, err = a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{Command: "create", Path: "a.txt"}})
	wantErr(t, "create without file_text", err, port.ErrInvalidRequest)

	// Destroying is idempotent; the session is gone afterwards.
	for _, sid := range []string{id, id, "never-existed", ""} {
		if err := a.DestroySession(ctx, sid); err != nil {
			t.Fatalf("destroy %q: %v", sid, err)
		}
	}
	_, err = a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)"})
	wantErr(t, "exec after destroy", err, port.ErrSessionNotFound)
	_, err = a.ListFiles(ctx, id, ".")
	wantErr(t, "list after destroy", err, port.ErrSessionNotFound)
	_, _, err = a.GetFile(ctx, "no/such session", "a.txt")
	wantErr(t, "get in unknown session", err, port.ErrSessionNotFound)
	_, err = a.PutFile(ctx, "nope", "a.txt", strings.NewReader("x"))
	wantErr(t, "put in unknown session", err, port.ErrSessionNotFound)

	caps, err := a.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if caps.Backend != "http" || caps.Runtime != "CPython" || caps.RuntimeVersion != wasm.RuntimeVersion ||
		caps.Network || caps.Limits.MaxSessions != wasm.DefaultSettings().SessionLimit() || len(caps.Tools) == 0 {
		t.Fatalf("capabilities: %+v", caps)
	}
	caps.Tools[0] = "mutated"
	if again, _ := a.Describe(ctx); again.Tools[0] == "mutated" {
		t.Fatal("Describe hands out its cache")
	}

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateSession(ctx, port.CreateSessionRequest{}); !errors.Is(err, port.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestRemoteEditor(t *testing.T) {
	a := newAdapter(t, httpadapter.NewConfig(serveWasm(t, nil)))
	id := create(t, a)
	steps := []struct {
		in     port.EditorInput
		rc     int
		stdout string
	}{
		{port.EditorInput{Command: port.EditorCreate, Path: "app.py", FileText: ptr("def f():\n    return 1\n")}, 0, ""},
		{port.EditorInput{Command: port.EditorCreate, Path: "app.py", FileText: ptr("again")}, 1, ""},
		{port.EditorInput{Command: port.EditorStrReplace, Path: "app.py", OldStr: ptr("return 1"), NewStr: ptr("return 41")}, 0, ""},
		{port.EditorInput{Command: port.EditorInsert, Path: "app.py", InsertLine: ptr(2), NewStr: ptr("print(f() + 1)")}, 0, ""},
		{port.EditorInput{Command: port.EditorView, Path: "app.py", ViewRange: []int{3, -1}}, 0, "3\tprint(f() + 1)"},
	}
	for i, s := range steps {
		res, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &s.in})
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if res.ReturnCode != s.rc || !strings.Contains(res.Stdout, s.stdout) || res.Tool != port.ToolTextEditorExecution {
			t.Fatalf("step %d: %+v", i, res)
		}
		if s.rc != 0 && (res.Outcome != port.OutcomeProgramError || res.Stderr == "") {
			t.Fatalf("step %d: an editor error must be a program error that says why: %+v", i, res)
		}
	}
	if res := run(t, a, id, "exec(open('app.py').read())"); res.Stdout != "42\n" {
		t.Fatalf("run the edited file: %+v", res)
	}
}

func TestRemoteFiles(t *testing.T) {
	const fileLimit = 1 << 20
	base := serveWasm(t, func(c wasm.Config) wasm.Config { return c.WithFileLimit(fileLimit) })
	a := newAdapter(t, httpadapter.NewConfig(base))
	ctx := context.Background()
	id := create(t, a)

	// A file large enough to need several chunks, from a reader that is
	// not a bytes.Reader, so nothing can take its length upfront.
	content := bytes.Repeat([]byte("0123456789abcdef"), 40<<10) // 640 KiB
	info, err := a.PutFile(ctx, id, "in/data.bin", io.MultiReader(bytes.NewReader(content[:1000]), bytes.NewReader(content[1000:])))
	if err != nil {
		t.Fatal(err)
	}
	if info.Path != "in/data.bin" || info.Size != int64(len(content)) {
		t.Fatalf("put: %+v", info)
	}
	if _, err := a.PutFile(ctx, id, "notes.txt", strings.NewReader("from the client")); err != nil {
		t.Fatal(err)
	}
	res := run(t, a, id, "import hashlib\nprint(len(open('in/data.bin','rb').read()), open('notes.txt').read())\n_ = open('out.csv', 'w').write('a,b\\n')")
	if res.Stdout != "655360 from the client\n" {
		t.Fatalf("python reads uploads: %+v", res)
	}

	list, err := a.ListFiles(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range list {
		names = append(names, f.Path)
		if f.Path == "in" && !f.IsDir {
			t.Errorf("in is a directory: %+v", f)
		}
		if f.Path == "notes.txt" && (f.Size != 15 || f.ModTime.IsZero()) {
			t.Errorf("notes.txt: %+v", f)
		}
	}
	if strings.Join(names, " ") != "in notes.txt out.csv" {
		t.Fatalf("list: %v", names)
	}
	if sub, err := a.ListFiles(ctx, id, "in"); err != nil || len(sub) != 1 || sub[0].Path != "in/data.bin" {
		t.Fatalf("list in: %+v %v", sub, err)
	}

	rc, fi, err := a.GetFile(ctx, id, "in/data.bin")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	_ = rc.Close()
	if err != nil || !bytes.Equal(got, content) || fi.Size != int64(len(content)) || fi.Path != "in/data.bin" {
		t.Fatalf("get: %d bytes, %v, %+v", len(got), err, fi)
	}
	rc, fi, err = a.GetFile(ctx, id, "out.csv")
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(rc)
	_ = rc.Close()
	if string(got) != "a,b\n" || !strings.HasPrefix(fi.MimeType, "text/csv") {
		t.Fatalf("get out.csv: %q %+v", got, fi)
	}

	_, _, err = a.GetFile(ctx, id, "absent.txt")
	wantErr(t, "missing file", err, port.ErrFileNotFound)
	if errors.Is(err, port.ErrSessionNotFound) || !strings.Contains(err.Error(), "404") {
		t.Fatalf("missing file: %v", err)
	}
	_, err = a.ListFiles(ctx, id, "absent")
	wantErr(t, "missing directory", err, port.ErrFileNotFound)
	_, _, err = a.GetFile(ctx, id, "in")
	wantErr(t, "get a directory", err, port.ErrIsDirectory)

	for _, p := range []string{"../secret", "/etc/passwd", "in/../../x"} {
		_, _, err := a.GetFile(ctx, id, p)
		wantErr(t, "get "+p, err, port.ErrPathEscapesWorkspace)
		_, err = a.ListFiles(ctx, id, p)
		wantErr(t, "list "+p, err, port.ErrPathEscapesWorkspace)
		_, err = a.PutFile(ctx, id, p, strings.NewReader("x"))
		wantErr(t, "put "+p, err, port.ErrPathEscapesWorkspace)
	}

	// Over the backend's cap: refused, whatever the size of the rest. The
	// 64 MiB one makes the backend stop reading long before the end.
	for _, size := range []int{fileLimit + 1, 4 << 20, 64 << 20} {
		_, err = a.PutFile(ctx, id, "big.bin", io.LimitReader(zeros{}, int64(size)))
		wantErr(t, "oversized upload", err, port.ErrFileTooLarge)
	}
	if _, _, err := a.GetFile(ctx, id, "big.bin"); !errors.Is(err, port.ErrFileNotFound) {
		t.Fatalf("a refused upload left a file: %v", err)
	}

	// Over the adapter's own download cap, announced by Content-Length.
	small := newAdapter(t, httpadapter.NewConfig(base).WithMaxFileBytes(1000))
	_, _, err = small.GetFile(ctx, id, "in/data.bin")
	wantErr(t, "download over the cap", err, port.ErrFileTooLarge)
}

// zeros reads as an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// stuckAfter is how long past its deadline a call may come back before a
// test calls the deadline ignored: a call that observes it comes back
// within seconds of it under any load, one that does not comes back at
// the adapter's wall clock (minutes, with the margins these tests set) or
// never. A bound nearer the deadline made the verdict depend on load.
const stuckAfter = 100 * time.Second

func TestRemoteTimeoutKeepsOutput(t *testing.T) {
	// The margin is far above what a loaded machine adds to the remote
	// timeout: the adapter's wall clock must not end the call first.
	a := newAdapter(t, httpadapter.NewConfig(serveWasm(t, nil)).WithTimeoutMargin(5*time.Minute))
	id := create(t, a)
	run(t, a, id, "kept = 1")
	start := time.Now()
	res, err := a.Execute(context.Background(), id, port.ExecuteRequest{
		Tool: port.ToolCodeExecution, Code: "print('before', flush=True)\nwhile True:\n    pass", Timeout: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != port.OutcomeTimedOut || res.Stdout != "before\n" || res.ReturnCode != port.ReturnCodeTimedOut || !res.StateLost {
		t.Fatalf("timeout: %+v", res)
	}
	if d := time.Since(start); d > time.Second+stuckAfter {
		t.Fatalf("a 1 s timeout took %s", d)
	}
	// The session goes on, with a fresh interpreter.
	if res := run(t, a, id, "print('kept' in globals())"); res.Stdout != "False\n" {
		t.Fatalf("after the timeout: %+v", res)
	}
}

func TestRemoteBusy(t *testing.T) {
	a := newAdapter(t, httpadapter.NewConfig(serveWasm(t, nil)))
	id := create(t, a)
	ctx := context.Background()
	long := make(chan error, 1)
	// The long call lasts until the test has seen a second call refused
	// and puts the file it waits for, not for a time that a loaded machine
	// may take to get there.
	go func() {
		// The prober below may hold the session for a moment: retry until
		// the long call itself is admitted.
		for {
			_, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Timeout: 300 * time.Second,
				Code: "import os, time\nwhile not os.path.exists('go'):\n    time.sleep(0.01)"})
			if !errors.Is(err, port.ErrSessionBusy) {
				long <- err
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	testwait.For(t, "a second call refused as busy", func() bool {
		_, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)"})
		if errors.Is(err, port.ErrSessionBusy) {
			if !strings.Contains(err.Error(), "409") {
				t.Fatalf("message: %v", err)
			}
			return true
		}
		if err != nil {
			t.Fatal(err)
		}
		return false
	})
	if _, err := a.PutFile(ctx, id, "go", strings.NewReader("go")); err != nil {
		t.Fatal(err)
	}
	if err := <-long; err != nil {
		t.Fatalf("the long call: %v", err)
	}
}

func TestRemoteCapacity(t *testing.T) {
	a := newAdapter(t, httpadapter.NewConfig(serveWasm(t, func(c wasm.Config) wasm.Config {
		return c.WithMaxSessions(1).WithRetryAfter(3 * time.Second)
	})))
	create(t, a)
	_, err := a.CreateSession(context.Background(), port.CreateSessionRequest{})
	var ce *port.CapacityError
	if !errors.Is(err, port.ErrAtCapacity) || !errors.As(err, &ce) || ce.RetryAfter != 3*time.Second {
		t.Fatalf("at capacity: %v", err)
	}
	if !strings.Contains(err.Error(), "503") {
		t.Fatalf("message: %v", err)
	}
}

func TestRemoteBearerToken(t *testing.T) {
	url := serveWasm(t, nil, server.WithBearerToken("s3cret-token"))
	ctx := context.Background()
	for _, cfg := range []httpadapter.Config{
		httpadapter.NewConfig(url),
		httpadapter.NewConfig(url).WithToken("wrong-token"),
	} {
		a := newAdapter(t, cfg)
		_, err := a.CreateSession(ctx, port.CreateSessionRequest{})
		wantErr(t, "create", err, port.ErrUnauthorized)
		_, err = a.Describe(ctx)
		wantErr(t, "describe", err, port.ErrUnauthorized)
		_, err = a.PutFile(ctx, "some-session", "a.txt", io.LimitReader(zeros{}, 8<<20))
		wantErr(t, "put", err, port.ErrUnauthorized)
		if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "wrong-token") {
			t.Fatalf("a token in a message: %v", err)
		}
	}
	a := newAdapter(t, httpadapter.NewConfig(url).WithToken("s3cret-token"))
	if res := run(t, a, create(t, a), "print('in')"); res.Stdout != "in\n" {
		t.Fatalf("with the token: %+v", res)
	}
}

// The adapter reads a streamed exec: the output reaches OnOutput while
// the program runs (the cell waits for a file the test puts only once it
// has the first chunk), and adds up to the result.
func TestRemoteStreamedOutput(t *testing.T) {
	a := newAdapter(t, httpadapter.NewConfig(serveWasm(t, nil)))
	ctx := context.Background()
	s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var out strings.Builder
	first := make(chan struct{})
	go func() {
		select {
		case <-first:
			_, _ = a.PutFile(ctx, s.ID, "go", strings.NewReader("go"))
		case <-t.Context().Done():
		}
	}()
	// The longest timeout the server admits, far above what a loaded
	// machine takes to stream the first line: only a call whose output is
	// not streamed runs into it.
	res, err := a.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Timeout: 300 * time.Second,
		Code: "import os, time\nprint(0, flush=True)\nwhile not os.path.exists('go'):\n    time.sleep(0.01)\nprint(1)",
		OnOutput: func(st port.Stream, b []byte) {
			mu.Lock()
			defer mu.Unlock()
			if st == port.Stdout {
				if out.Len() == 0 {
					close(first)
				}
				out.Write(b)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if res.Stdout != "0\n1\n" || out.String() != res.Stdout {
		t.Fatalf("streamed %q, result %q", out.String(), res.Stdout)
	}
}

package porttest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codeport/codeport/internal/editor"
	"github.com/codeport/codeport/internal/testkit/fakeclock"
	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/port/porttest"
)

func str(s string) *string { return &s }
func num(n int) *int       { return &n }

// newPort returns a fake closed when t ends, and its driver.
func newPort(t *testing.T, opts ...porttest.Option) (*port.Port, *porttest.Driver) {
	t.Helper()
	d := porttest.NewDriver(opts...)
	p := port.New(d)
	t.Cleanup(func() { _ = p.Close() })
	return p, d
}

func session(t *testing.T, p port.CodeExecutionPort) string {
	t.Helper()
	s, err := p.CreateSession(t.Context(), port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return s.ID
}

func edit(t *testing.T, p port.CodeExecutionPort, id string, in port.EditorInput) port.Result {
	t.Helper()
	res, err := p.Execute(t.Context(), id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &in})
	if err != nil {
		t.Fatalf("editor %s %s: %v", in.Command, in.Path, err)
	}
	return res
}

func put(t *testing.T, p port.CodeExecutionPort, id, name, data string) {
	t.Helper()
	if _, err := p.PutFile(t.Context(), id, name, strings.NewReader(data)); err != nil {
		t.Fatalf("PutFile(%q): %v", name, err)
	}
}

func get(t *testing.T, p port.CodeExecutionPort, id, name string) (string, error) {
	t.Helper()
	rc, _, err := p.GetFile(t.Context(), id, name)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), nil
}

func echo(_ context.Context, _ porttest.Session, req port.ExecuteRequest) (port.Result, error) {
	return port.Result{Stdout: req.Code + req.Command + "\n"}, nil
}

func TestDescribeIsHonest(t *testing.T) {
	p, _ := newPort(t)
	caps, err := p.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if caps.Backend != "porttest" || caps.Runtime != "none" || caps.Partial || caps.Network || len(caps.Packages) != 0 {
		t.Errorf("%+v", caps)
	}
	if !slices.Equal(caps.Tools, []port.ToolKind{port.ToolTextEditorExecution}) {
		t.Errorf("tools %v without an executor", caps.Tools)
	}
	if caps.Limits != porttest.DefaultLimits() || caps.WorkingDirectory != "/workspace" {
		t.Errorf("limits %+v, working directory %q", caps.Limits, caps.WorkingDirectory)
	}
	id := session(t, p)
	for _, kind := range []port.ToolKind{port.ToolCodeExecution, port.ToolBashCodeExecution} {
		_, err := p.Execute(t.Context(), id, port.ExecuteRequest{Tool: kind, Code: "print(1)", Command: "echo 1"})
		if !errors.Is(err, port.ErrUnsupportedTool) {
			t.Errorf("%s without an executor: %v", kind, err)
		}
	}

	lim := porttest.DefaultLimits()
	lim.MaxSessions, lim.FileBytes = 3, 1000
	p, _ = newPort(t, porttest.WithLimits(lim), porttest.WithExecutor(echo, port.ToolBashCodeExecution, port.ToolCodeExecution))
	caps, _ = p.Describe(t.Context())
	if !slices.Equal(caps.Tools, []port.ToolKind{port.ToolCodeExecution, port.ToolBashCodeExecution, port.ToolTextEditorExecution}) {
		t.Errorf("tools %v with both executors", caps.Tools)
	}
	if caps.Limits != lim {
		t.Errorf("limits %+v, want %+v", caps.Limits, lim)
	}
	p, _ = newPort(t, porttest.WithExecutor(echo))
	caps, _ = p.Describe(t.Context())
	if !slices.Equal(caps.Tools, []port.ToolKind{port.ToolCodeExecution, port.ToolTextEditorExecution}) {
		t.Errorf("tools %v with a default executor", caps.Tools)
	}
}

func TestBadOptionsPanic(t *testing.T) {
	for name, opts := range map[string][]porttest.Option{
		"nil executor":     {porttest.WithExecutor(nil)},
		"editor executor":  {porttest.WithExecutor(echo, port.ToolTextEditorExecution)},
		"negative limit":   {porttest.WithMaxSessions(-1)},
		"default over max": {porttest.WithLimits(port.Limits{DefaultTimeout: time.Hour, MaxTimeout: time.Minute})},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			porttest.New(opts...)
		})
	}
}

func TestCapacity(t *testing.T) {
	p, d := newPort(t, porttest.WithMaxSessions(2))
	a, b := session(t, p), session(t, p)
	if a == b {
		t.Fatalf("ids %q, %q", a, b)
	}
	_, err := p.CreateSession(t.Context(), port.CreateSessionRequest{})
	var ce *port.CapacityError
	if !errors.As(err, &ce) || !errors.Is(err, port.ErrAtCapacity) || ce.Limit != 2 || ce.RetryAfter <= 0 {
		t.Fatalf("third session: %v", err)
	}
	if got := d.Sessions(); !slices.Equal(got, []string{a, b}) {
		t.Fatalf("Sessions() = %q", got)
	}
	for range 2 { // idempotent
		if err := p.DestroySession(t.Context(), a); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.DestroySession(t.Context(), "never-made"); err != nil {
		t.Fatal(err)
	}
	c := session(t, p)
	if c == a {
		t.Fatalf("a destroyed session's id %q was reused", a)
	}
}

func TestLifetimeHintsAreClamped(t *testing.T) {
	p, _ := newPort(t)
	l := porttest.DefaultLimits()
	for _, c := range []struct {
		idle, life         time.Duration
		wantIdle, wantLife time.Duration
	}{
		{0, 0, l.DefaultIdleTimeout, l.MaxLifetime},
		{time.Minute, 2 * time.Minute, time.Minute, 2 * time.Minute},
		{100 * time.Hour, 100 * time.Hour, l.MaxIdleTimeout, l.MaxLifetime},
	} {
		s, err := p.CreateSession(t.Context(), port.CreateSessionRequest{IdleTimeout: c.idle, MaxLifetime: c.life})
		if err != nil {
			t.Fatal(err)
		}
		if s.IdleTimeout != c.wantIdle || s.MaxLifetime != c.wantLife || s.CreatedAt.IsZero() {
			t.Errorf("hints %v, %v: got %+v", c.idle, c.life, s)
		}
	}
	if _, err := p.CreateSession(t.Context(), port.CreateSessionRequest{IdleTimeout: -time.Second}); !errors.Is(err, port.ErrInvalidRequest) {
		t.Errorf("a negative hint: %v", err)
	}
}

func TestIdleAndExpiredSessionsAreReclaimed(t *testing.T) {
	clk := fakeclock.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	p, d := newPort(t, porttest.WithClock(clk.Now), porttest.WithMaxSessions(2))
	idle, err := p.CreateSession(t.Context(), port.CreateSessionRequest{IdleTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	busy, err := p.CreateSession(t.Context(), port.CreateSessionRequest{IdleTimeout: time.Hour, MaxLifetime: 4 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !idle.CreatedAt.Equal(clk.Now()) {
		t.Errorf("created at %v on the test's clock %v", idle.CreatedAt, clk.Now())
	}
	// Activity keeps a session alive.
	clk.Advance(50 * time.Second)
	put(t, p, idle.ID, "a.txt", "a")
	clk.Advance(50 * time.Second)
	if _, err := get(t, p, idle.ID, "a.txt"); err != nil {
		t.Fatalf("a session used 50 s ago: %v", err)
	}
	clk.Advance(time.Minute)
	if _, err := get(t, p, idle.ID, "a.txt"); !errors.Is(err, port.ErrSessionNotFound) {
		t.Fatalf("a session idle for its idle timeout: %v", err)
	}
	// Reclaimed sessions free their capacity.
	session(t, p)
	// The lifetime bounds a session however busy.
	clk.Advance(time.Minute)
	edit(t, p, busy.ID, port.EditorInput{Command: port.EditorView, Path: "."})
	if got := d.Sessions(); !slices.Contains(got, busy.ID) {
		t.Fatalf("live sessions %q lack %s", got, busy.ID)
	}
	clk.Advance(time.Minute)
	if got := d.Sessions(); slices.Contains(got, busy.ID) {
		t.Fatalf("a session past its lifetime is still live: %q", got)
	}
}

func TestBusyAndStall(t *testing.T) {
	p, d := newPort(t)
	id := session(t, p)
	started, release := d.Stall(id)
	defer release()
	done := make(chan port.Result, 1)
	go func() {
		in := port.EditorInput{Command: port.EditorCreate, Path: "slow.txt", FileText: str("slow\n")}
		res, err := p.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &in})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	<-started
	in := port.EditorInput{Command: port.EditorView, Path: "."}
	if _, err := p.Execute(t.Context(), id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &in}); !errors.Is(err, port.ErrSessionBusy) {
		t.Fatalf("a second call: %v", err)
	}
	// File operations run beside a call, as on the real adapters.
	put(t, p, id, "beside.txt", "x")
	if _, err := get(t, p, id, "slow.txt"); !errors.Is(err, port.ErrFileNotFound) {
		t.Fatalf("the stalled call ran before its release: %v", err)
	}
	release()
	if res := <-done; res.ReturnCode != 0 || res.Outcome != port.OutcomeCompleted {
		t.Fatalf("the released call: %+v", res)
	}
	if got, _ := get(t, p, id, "slow.txt"); got != "slow\n" {
		t.Fatalf("slow.txt = %q", got)
	}
	// The stall was for one call.
	edit(t, p, id, in)
}

func TestStalledCallsStop(t *testing.T) {
	p, d := newPort(t)
	in := port.EditorInput{Command: port.EditorCreate, Path: "never.txt", FileText: str("x")}
	req := port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &in}

	id := session(t, p)
	d.Stall(id)
	res, err := p.Execute(t.Context(), id, port.ExecuteRequest{Tool: req.Tool, Editor: req.Editor, Timeout: 20 * time.Millisecond})
	if err != nil || res.Outcome != port.OutcomeTimedOut || res.ReturnCode != port.ReturnCodeTimedOut || !strings.Contains(res.Stderr, "timed out") {
		t.Fatalf("a stalled call past its deadline: %+v, %v", res, err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	started, _ := d.Stall(id)
	go func() { <-started; cancel() }()
	res, err = p.Execute(ctx, id, req)
	if err != nil || res.Outcome != port.OutcomeCancelled || res.ReturnCode != port.ReturnCodeCancelled {
		t.Fatalf("a stalled call cancelled: %+v, %v", res, err)
	}
	if _, err := get(t, p, id, "never.txt"); !errors.Is(err, port.ErrFileNotFound) {
		t.Fatalf("a stopped call ran: %v", err)
	}

	// Destroying a session stops its call and waits for it.
	started, _ = d.Stall(id)
	got := make(chan port.Result, 1)
	go func() {
		res, _ := p.Execute(t.Context(), id, req)
		got <- res
	}()
	<-started
	if err := p.DestroySession(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if res := <-got; res.Outcome != port.OutcomeCancelled {
		t.Fatalf("the call of a destroyed session: %+v", res)
	}

	// Close does the same for every session.
	id = session(t, p)
	started, _ = d.Stall(id)
	go func() {
		res, _ := p.Execute(t.Context(), id, req)
		got <- res
	}()
	<-started
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if res := <-got; res.Outcome != port.OutcomeCancelled {
		t.Fatalf("the call of a closed port: %+v", res)
	}
	if _, err := p.CreateSession(t.Context(), port.CreateSessionRequest{}); !errors.Is(err, port.ErrClosed) {
		t.Fatalf("CreateSession after Close: %v", err)
	}
}

func TestWorkspaceRules(t *testing.T) {
	l := porttest.DefaultLimits()
	l.FileBytes, l.WorkspaceBytes = 10, 24
	p, _ := newPort(t, porttest.WithLimits(l))
	id := session(t, p)
	ctx := t.Context()

	for _, bad := range []string{"../x", "a/../../x", "/etc/passwd", "/workspace/../x", "/workspacex/y"} {
		if _, err := p.PutFile(ctx, id, bad, strings.NewReader("x")); !errors.Is(err, port.ErrPathEscapesWorkspace) {
			t.Errorf("PutFile(%q): %v", bad, err)
		}
		if _, err := get(t, p, id, bad); !errors.Is(err, port.ErrPathEscapesWorkspace) {
			t.Errorf("GetFile(%q): %v", bad, err)
		}
		if _, err := p.ListFiles(ctx, id, bad); !errors.Is(err, port.ErrPathEscapesWorkspace) {
			t.Errorf("ListFiles(%q): %v", bad, err)
		}
	}
	// Parents are made; absolute paths under the working directory work.
	put(t, p, id, "d/e/f.txt", "12345")
	if got, err := get(t, p, id, "/workspace/d/e/f.txt"); err != nil || got != "12345" {
		t.Fatalf("GetFile through /workspace: %q, %v", got, err)
	}
	if _, err := get(t, p, id, "nope.txt"); !errors.Is(err, port.ErrFileNotFound) {
		t.Errorf("GetFile of a missing file: %v", err)
	}
	if _, err := get(t, p, id, "d"); !errors.Is(err, port.ErrIsDirectory) {
		t.Errorf("GetFile of a directory: %v", err)
	}
	if _, err := p.PutFile(ctx, id, "d/e", strings.NewReader("x")); !errors.Is(err, port.ErrIsDirectory) {
		t.Errorf("PutFile over a directory: %v", err)
	}
	if _, err := p.PutFile(ctx, id, "d/e/f.txt/g", strings.NewReader("x")); !errors.Is(err, port.ErrInvalidRequest) {
		t.Errorf("PutFile under a file: %v", err)
	}
	if _, err := p.ListFiles(ctx, id, "missing"); !errors.Is(err, port.ErrFileNotFound) {
		t.Errorf("ListFiles of a missing directory: %v", err)
	}
	// A file over the cap is refused, never truncated, and the old one kept.
	if _, err := p.PutFile(ctx, id, "d/e/f.txt", strings.NewReader("12345678901")); !errors.Is(err, port.ErrFileTooLarge) {
		t.Errorf("PutFile over FileBytes: %v", err)
	}
	// The workspace quota counts every file; a replaced file's bytes are free.
	put(t, p, id, "g.txt", "1234567890")
	var qe *workspace.QuotaError
	if _, err := p.PutFile(ctx, id, "h.txt", strings.NewReader("1234567890")); !errors.As(err, &qe) || !errors.Is(err, port.ErrFileTooLarge) {
		t.Errorf("PutFile over WorkspaceBytes: %v", err)
	}
	put(t, p, id, "g.txt", "0987654321")
	if got, _ := get(t, p, id, "d/e/f.txt"); got != "12345" {
		t.Errorf("a refused upload changed the file to %q", got)
	}

	files, err := p.ListFiles(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, fmt.Sprintf("%s dir=%v size=%d", f.Path, f.IsDir, f.Size))
	}
	want := []string{"d dir=true size=0", "g.txt dir=false size=10"}
	if !slices.Equal(names, want) {
		t.Errorf("ListFiles(\"\") = %q, want %q", names, want)
	}
	files, _ = p.ListFiles(ctx, id, "d/e")
	if len(files) != 1 || files[0].Path != "d/e/f.txt" || files[0].MimeType != "text/plain; charset=utf-8" {
		t.Errorf("ListFiles(\"d/e\") = %+v", files)
	}
	for _, op := range []func() error{
		func() error { _, err := p.ListFiles(ctx, "gone", "."); return err },
		func() error { _, err := get(t, p, "gone", "x"); return err },
		func() error { _, err := p.PutFile(ctx, "gone", "x", strings.NewReader("")); return err },
	} {
		if err := op(); !errors.Is(err, port.ErrSessionNotFound) {
			t.Errorf("a file operation on an unknown session: %v", err)
		}
	}
}

// TestEditorMatchesTheRealWorkspace runs the same editor commands against
// the fake and against internal/editor over an on-disk workspace, and
// wants the same outputs, byte for byte.
func TestEditorMatchesTheRealWorkspace(t *testing.T) {
	const fileBytes = 200
	l := porttest.DefaultLimits()
	l.FileBytes = fileBytes
	p, _ := newPort(t, porttest.WithLimits(l))
	id := session(t, p)
	ws, err := workspace.New(filepath.Join(t.TempDir(), "ws"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ed := editor.New(ws, editor.Options{MaxFileBytes: fileBytes, MaxHistoryBytes: 64 << 20})

	steps := []port.EditorInput{
		{Command: port.EditorView, Path: "."},
		{Command: port.EditorView, Path: "missing.txt"},
		{Command: port.EditorCreate, Path: "a.txt", FileText: str("one\ntwo\nthree\n")},
		{Command: port.EditorCreate, Path: "a.txt", FileText: str("again\n")},
		{Command: port.EditorCreate, Path: "dir/sub/b.py", FileText: str("print('b')\r\nx = 1\r\n")},
		{Command: port.EditorCreate, Path: "a.txt/c.txt", FileText: str("under a file\n")},
		{Command: port.EditorView, Path: "a.txt"},
		{Command: port.EditorView, Path: "/workspace/a.txt", ViewRange: []int{2, -1}},
		{Command: port.EditorView, Path: "a.txt", ViewRange: []int{3, 9}},
		{Command: port.EditorView, Path: "dir"},
		{Command: port.EditorView, Path: "."},
		{Command: port.EditorView, Path: "dir", ViewRange: []int{1, 2}},
		{Command: port.EditorView, Path: "../etc/passwd"},
		{Command: port.EditorView, Path: "/etc/passwd"},
		{Command: port.EditorStrReplace, Path: "a.txt", OldStr: str("two"), NewStr: str("2\n2b")},
		{Command: port.EditorStrReplace, Path: "a.txt", OldStr: str("o"), NewStr: str("0")},
		{Command: port.EditorStrReplace, Path: "a.txt", OldStr: str("zzz"), NewStr: str("")},
		{Command: port.EditorStrReplace, Path: "a.txt", OldStr: str("three"), NewStr: str(strings.Repeat("3", fileBytes))},
		{Command: port.EditorStrReplace, Path: "dir/sub/b.py", OldStr: str("print('b')\nx"), NewStr: str("y")},
		{Command: port.EditorStrReplace, Path: "dir", OldStr: str("a"), NewStr: str("b")},
		{Command: port.EditorInsert, Path: "a.txt", InsertLine: num(0), NewStr: str("zero")},
		{Command: port.EditorInsert, Path: "a.txt", InsertLine: num(99), NewStr: str("far")},
		{Command: port.EditorInsert, Path: "dir/sub/b.py", InsertLine: num(2), NewStr: str("z = 3\nw = 4")},
		{Command: port.EditorView, Path: "a.txt"},
		{Command: port.EditorUndoEdit, Path: "a.txt"},
		{Command: port.EditorUndoEdit, Path: "a.txt"},
		{Command: port.EditorUndoEdit, Path: "a.txt"},
		{Command: port.EditorUndoEdit, Path: "a.txt"},
		{Command: port.EditorView, Path: "a.txt"},
		{Command: port.EditorUndoEdit, Path: "never-edited.txt"},
		{Command: port.EditorStrReplace, Path: "a.txt", NewStr: str("x")},
	}
	for i, in := range steps {
		want, wantErr := ed.Run(in)
		res, err := p.Execute(t.Context(), id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &in})
		if (err != nil) != (wantErr != nil) || (err != nil && !errors.Is(err, port.ErrInvalidRequest)) {
			t.Fatalf("step %d %+v: error %v, on disk %v", i, in, err, wantErr)
		}
		if err != nil {
			continue
		}
		if res.Stdout != want.Stdout || res.Stderr != want.Stderr || res.ReturnCode != want.ReturnCode {
			t.Errorf("step %d %s %s:\nfake    %q %q %d\non disk %q %q %d", i, in.Command, in.Path,
				res.Stdout, res.Stderr, res.ReturnCode, want.Stdout, want.Stderr, want.ReturnCode)
		}
		wantOutcome := port.OutcomeCompleted
		if want.ReturnCode != 0 {
			wantOutcome = port.OutcomeProgramError
		}
		if res.Outcome != wantOutcome {
			t.Errorf("step %d: outcome %q, want %q", i, res.Outcome, wantOutcome)
		}
	}
}

func TestExecutor(t *testing.T) {
	l := porttest.DefaultLimits()
	l.OutputBytes = 16
	var seen []string
	var mu sync.Mutex
	exec := func(ctx context.Context, s porttest.Session, req port.ExecuteRequest) (port.Result, error) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s %s", s.ID(), req.Tool, req.Timeout))
		mu.Unlock()
		switch req.Code + req.Command {
		case "read":
			b, err := s.ReadFile("in.txt")
			if err != nil {
				return port.Result{Stderr: err.Error() + "\n", ReturnCode: 1}, nil
			}
			return port.Result{Stdout: string(b)}, nil
		case "write":
			if err := s.WriteFile("out/result.txt", []byte("written")); err != nil {
				return port.Result{}, err
			}
			return port.Result{Files: []port.OutputFile{{FileID: "f1", Filename: "out/result.txt"}}}, nil
		case "fail":
			return port.Result{Stderr: "Traceback\n", ReturnCode: 1}, nil
		case "loud":
			return port.Result{Stdout: strings.Repeat("é", 20)}, nil
		case "hang":
			<-ctx.Done()
			return port.Result{Stdout: "partial\n"}, ctx.Err()
		case "broken":
			return port.Result{}, fmt.Errorf("%w: the test says so", port.ErrRuntimeFailure)
		case "crash":
			return port.Result{Stderr: "worker died\n", ReturnCode: 137, Outcome: port.OutcomeSessionLost}, nil
		}
		return port.Result{Stdout: req.Code + req.Command + "\n"}, nil
	}
	p, _ := newPort(t, porttest.WithLimits(l), porttest.WithExecutor(exec, port.ToolCodeExecution, port.ToolBashCodeExecution))
	id := session(t, p)
	run := func(tool port.ToolKind, what string, timeout time.Duration) (port.Result, error) {
		req := port.ExecuteRequest{Tool: tool, Code: what, Timeout: timeout, ToolUseID: "srvtoolu_test"}
		if tool == port.ToolBashCodeExecution {
			req.Code, req.Command = "", what
		}
		return p.Execute(t.Context(), id, req)
	}

	res, err := run(port.ToolCodeExecution, "hello", 0)
	if err != nil || res.Stdout != "hello\n" || res.Outcome != port.OutcomeCompleted || res.ToolUseID != "srvtoolu_test" ||
		res.Tool != port.ToolCodeExecution || res.Duration <= 0 {
		t.Fatalf("hello: %+v, %v", res, err)
	}
	res, _ = run(port.ToolBashCodeExecution, "hello", 0)
	if res.Tool != port.ToolBashCodeExecution || res.Stdout != "hello\n" {
		t.Fatalf("bash: %+v", res)
	}
	put(t, p, id, "in.txt", "uploaded")
	if res, _ := run(port.ToolCodeExecution, "read", 0); res.Stdout != "uploaded" {
		t.Errorf("read: %+v", res)
	}
	if res, _ := run(port.ToolCodeExecution, "write", 0); len(res.Files) != 1 {
		t.Errorf("write: %+v", res)
	}
	if got, _ := get(t, p, id, "out/result.txt"); got != "written" {
		t.Errorf("the executor's file reads %q", got)
	}
	if res, _ := run(port.ToolCodeExecution, "fail", 0); res.Outcome != port.OutcomeProgramError || res.ReturnCode != 1 {
		t.Errorf("fail: %+v", res)
	}
	res, _ = run(port.ToolCodeExecution, "loud", 0)
	if !res.OutputTruncated || !strings.HasPrefix(res.Stdout, strings.Repeat("é", 8)+"\n[porttest: output truncated: 24 bytes dropped") {
		t.Errorf("loud: %+v", res)
	}
	res, err = run(port.ToolCodeExecution, "hang", 20*time.Millisecond)
	if err != nil || res.Outcome != port.OutcomeTimedOut || res.ReturnCode != port.ReturnCodeTimedOut ||
		res.Stdout != "partial\n" || !strings.Contains(res.Stderr, "timed out after 20ms") {
		t.Errorf("hang: %+v, %v", res, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	res, err = p.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "hang"})
	if err != nil || res.Outcome != port.OutcomeCancelled || res.ReturnCode != port.ReturnCodeCancelled {
		t.Errorf("hang, cancelled: %+v, %v", res, err)
	}
	if _, err := run(port.ToolCodeExecution, "broken", 0); !errors.Is(err, port.ErrRuntimeFailure) {
		t.Errorf("broken: %v", err)
	}
	// The port resolves the timeout before the executor sees it.
	mu.Lock()
	if want := id + " code_execution 30s"; seen[0] != want {
		t.Errorf("the executor saw %q, want %q", seen[0], want)
	}
	mu.Unlock()
	if res, _ := run(port.ToolCodeExecution, "crash", 0); res.Outcome != port.OutcomeSessionLost {
		t.Errorf("crash: %+v", res)
	}
	if _, err := run(port.ToolCodeExecution, "hello", 0); !errors.Is(err, port.ErrSessionNotFound) {
		t.Errorf("a call after the session was lost: %v", err)
	}
}

// TestDestroyAwaitsTheCall: DestroySession stops the session's call and
// returns once it has ended, as the real adapters do, so nothing of the
// session runs after it.
func TestDestroyAwaitsTheCall(t *testing.T) {
	var ended atomic.Bool
	entered := make(chan struct{})
	p, _ := newPort(t, porttest.WithExecutor(func(ctx context.Context, _ porttest.Session, _ port.ExecuteRequest) (port.Result, error) {
		close(entered)
		<-ctx.Done()
		time.Sleep(20 * time.Millisecond) // a program slow to stop
		ended.Store(true)
		return port.Result{}, ctx.Err()
	}))
	id := session(t, p)
	got := make(chan port.Result, 1)
	go func() {
		res, _ := p.Execute(t.Context(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "wait"})
		got <- res
	}()
	<-entered
	if err := p.DestroySession(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if !ended.Load() {
		t.Fatal("DestroySession returned before the call it stopped had ended")
	}
	if res := <-got; res.Outcome != port.OutcomeCancelled {
		t.Fatalf("the call of a destroyed session: %+v", res)
	}
}

// TestConcurrentSessions works many sessions at once, for the race
// detector.
func TestConcurrentSessions(t *testing.T) {
	p, d := newPort(t, porttest.WithExecutor(func(_ context.Context, s porttest.Session, req port.ExecuteRequest) (port.Result, error) {
		b, err := s.ReadFile("n.txt")
		if err != nil {
			return port.Result{}, err
		}
		return port.Result{Stdout: string(b) + req.Code}, s.WriteFile("n.txt", append(b, '+'))
	}))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s, err := p.CreateSession(t.Context(), port.CreateSessionRequest{})
			if err != nil {
				t.Error(err)
				return
			}
			defer p.DestroySession(context.Background(), s.ID)
			for j := range 20 {
				put(t, p, s.ID, "n.txt", fmt.Sprint(i))
				res, err := p.Execute(t.Context(), s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: fmt.Sprint(j)})
				if err != nil || res.Stdout != fmt.Sprintf("%d%d", i, j) {
					t.Errorf("session %d call %d: %+v, %v", i, j, res, err)
				}
				in := port.EditorInput{Command: port.EditorView, Path: "n.txt"}
				res, err = p.Execute(t.Context(), s.ID, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &in})
				if err != nil || !strings.Contains(res.Stdout, fmt.Sprint(i)+"+") {
					t.Errorf("session %d view %d: %+v, %v", i, j, res, err)
				}
				if _, err := p.ListFiles(t.Context(), s.ID, "."); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if live := d.Sessions(); len(live) != 0 {
		t.Errorf("sessions left: %q", live)
	}
}

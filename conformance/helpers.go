package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/codeport/codeport/port"
)

// env is what a check body works with: its context, its recorder and the
// port, with helpers that fail the check when a call that must work does not.
type env struct {
	ctx context.Context
	t   *T
	p   port.CodeExecutionPort
	// unlisted are tool kinds run although Describe could not say whether
	// the backend offers them: a refusal then means "not offered".
	unlisted map[port.ToolKind]string

	// Describe's answer, asked once per check (describe).
	described bool
	caps      port.Capabilities
	capsErr   error

	// heavy is set by the checks of packages (packageSession): their cells
	// import numpy, pandas, sympy or matplotlib, seconds of work that a
	// loaded machine stretches, so they ask for heavyTimeout rather than
	// the backend's default deadline.
	heavy bool
}

// check adapts a check body to Check.Run.
func check(body func(e *env)) func(ctx context.Context, t *T) {
	return func(ctx context.Context, t *T) {
		body(&env{ctx: ctx, t: t, p: t.Port(), unlisted: map[port.ToolKind]string{}})
	}
}

// cleanupTimeout bounds each cleanup call; cleanups run even after the
// check's own context has ended.
const cleanupTimeout = 30 * time.Second

// capacityWait bounds how long session waits out at_capacity refusals.
const capacityWait = time.Minute

// session creates a session that is destroyed when the check ends. An
// at_capacity refusal is waited out, as its retry hint asks, for up to
// capacityWait: the sessions of the checks before may still be releasing
// their slots (a worker process being retired, say), which a client meets
// as a transient refusal, not as a defect. The capacity check, which
// wants the refusal, calls CreateSession itself.
func (e *env) session() string {
	deadline := time.Now().Add(capacityWait)
	s, err := e.p.CreateSession(e.ctx, port.CreateSessionRequest{})
	for err != nil && errors.Is(err, port.ErrAtCapacity) && time.Now().Before(deadline) {
		wait := 100 * time.Millisecond
		var ce *port.CapacityError
		if errors.As(err, &ce) && ce.RetryAfter > 0 {
			wait = min(ce.RetryAfter, 5*time.Second)
		}
		select {
		case <-e.ctx.Done():
			e.t.Fatalf("CreateSession: %v (waiting out: %v)", e.ctx.Err(), err)
		case <-time.After(wait):
		}
		s, err = e.p.CreateSession(e.ctx, port.CreateSessionRequest{})
	}
	if err != nil {
		e.t.Fatalf("CreateSession: %v", err)
	}
	if s.ID == "" {
		e.t.Fatalf("CreateSession returned a session without an id")
	}
	e.destroyLater(s.ID)
	return s.ID
}

// destroyLater destroys the session when the check ends.
func (e *env) destroyLater(id string) {
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(e.ctx), cleanupTimeout)
		defer cancel()
		if err := e.p.DestroySession(ctx, id); err != nil {
			e.t.Errorf("DestroySession(%s) at cleanup: %v", id, err)
		}
	})
}

// exec runs a request that must run (a failed program is fine).
func (e *env) exec(id string, req port.ExecuteRequest) port.Result {
	res, err := e.p.Execute(e.ctx, id, req)
	if err != nil {
		e.toolRefused(req.Tool, err)
		e.t.Fatalf("Execute(%s): %v", describeReq(req), err)
	}
	return res
}

// toolRefused stops the check when err is the backend refusing the tool
// kind: a skip when it was never listed, a failure when it was.
func (e *env) toolRefused(kind port.ToolKind, err error) {
	if !kind.Known() {
		return
	}
	why, unlisted := e.unlisted[kind]
	switch {
	case unlisted && (errors.Is(err, port.ErrUnsupportedTool) || errors.Is(err, port.ErrInvalidRequest)):
		// Contract v1 lets a backend refuse a kind with 400 or 422.
		e.t.Skipf("backend does not offer %s (%s, and it refused the tool kind: %v)", kind, why, err)
	case !unlisted && errors.Is(err, port.ErrUnsupportedTool):
		e.t.Fatalf("backend lists %s among its tools but refused it: %v", kind, err)
	}
}

// code runs Python that must run.
func (e *env) code(id, code string) port.Result {
	req := port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code}
	if e.heavy {
		req.Timeout = heavyTimeout
	}
	return e.exec(id, req)
}

// codeOK runs Python that must complete with return code 0, and returns its
// stdout.
func (e *env) codeOK(id, code string) string {
	res := e.code(id, code)
	if res.ReturnCode != 0 {
		e.t.Fatalf("code %q: return code %d, stderr %q", firstLine(code), res.ReturnCode, clip(res.Stderr))
	}
	return res.Stdout
}

// expectStdout runs Python that must complete and print want.
func (e *env) expectStdout(id, code, want string) {
	if got := e.codeOK(id, code); !sameOutput(got, want) {
		e.t.Fatalf("code %q: stdout %q, want %q", firstLine(code), clip(got), want)
	}
}

// describe returns the backend's Describe, asked once per check.
func (e *env) describe() (port.Capabilities, error) {
	if !e.described {
		e.caps, e.capsErr = e.p.Describe(e.ctx)
		e.described = true
	}
	return e.caps, e.capsErr
}

// offers reports whether the check should use kind: true unless Describe
// answered and does not list it. A backend that cannot describe itself is
// taken to run every kind, so that its checks keep their full strength;
// a refusal then says otherwise.
func (e *env) offers(kind port.ToolKind) bool {
	caps, err := e.describe()
	return err != nil || slices.Contains(caps.Tools, kind)
}

// python reports whether a check may use the interpreter for what is not
// its subject (writing a file, showing a session is alive). Where
// code_execution is not offered, such checks go through the editor and the
// file operations instead; where it is, they test the interpreter as well.
func (e *env) python() bool { return e.offers(port.ToolCodeExecution) }

// writeText writes a workspace file through the interpreter, so that checks
// of other tools depend only on code_execution; on a backend without it,
// through PutFile.
func (e *env) writeText(id, name, text string) {
	if !e.python() {
		e.put(id, name, []byte(text))
		return
	}
	e.codeOK(id, "import os\n"+
		"_d = os.path.dirname("+py(name)+")\n"+
		"if _d:\n    os.makedirs(_d, exist_ok=True)\n"+
		"with open("+py(name)+", 'w', newline='') as _f:\n    _f.write("+py(text)+")")
}

// readText reads a workspace file through the interpreter (through
// GetFile on a backend without code_execution). A missing file reads as
// "<missing>". The content is followed by an end mark, so that a backend
// that trims trailing whitespace from stdout (the reference one does)
// cannot change what the file is seen to hold.
func (e *env) readText(id, name string) string {
	if !e.python() {
		b, _, ok := e.download(id, name)
		if !ok {
			return "<missing>"
		}
		return string(b)
	}
	const end = "<end-of-file>"
	out := e.codeOK(id, "import os, sys\n"+
		"if os.path.exists("+py(name)+"):\n"+
		"    sys.stdout.write(open("+py(name)+", newline='').read() + "+py(end)+")\n"+
		"else:\n    sys.stdout.write('<missing>' + "+py(end)+")")
	got, ok := strings.CutSuffix(strings.TrimRight(out, "\r\n"), end)
	if !ok {
		e.t.Fatalf("reading %s back: the output lacks its end mark: %q", name, clip(out))
	}
	return got
}

// requireTool notes whether Describe lists kind. A listed kind must work.
// An unlisted one is tried all the same, since a backend without a
// capability description (the contract does not require one) may still
// offer it: a refusal of the tool kind then becomes the skip.
func (e *env) requireTool(kind port.ToolKind) {
	caps, err := e.describe()
	switch {
	case err != nil:
		e.t.Logf("Describe failed (%v): trying %s to see whether it is offered", err, kind)
		e.unlisted[kind] = "Describe failed"
	case !slices.Contains(caps.Tools, kind):
		e.t.Logf("Describe does not list %s: trying it to see whether it is offered", kind)
		e.unlisted[kind] = "not listed by Describe"
	}
}

// alive checks that the session still answers: through the interpreter,
// or through the editor where code_execution is not offered.
func (e *env) alive(id string) {
	if e.python() {
		e.expectStdout(id, "print('still here')", "still here\n")
		return
	}
	e.requireTool(port.ToolTextEditorExecution)
	e.editOK(id, port.EditorInput{Command: port.EditorView, Path: "."})
}

// edit runs an editor command that must run.
func (e *env) edit(id string, in port.EditorInput) port.Result {
	return e.exec(id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &in})
}

// editOK runs an editor command that must succeed.
func (e *env) editOK(id string, in port.EditorInput) port.Result {
	res := e.edit(id, in)
	if res.ReturnCode != 0 {
		e.t.Fatalf("editor %s %s: return code %d, stderr %q", in.Command, in.Path, res.ReturnCode, clip(res.Stderr))
	}
	return res
}

// editRefused runs an editor command the editor must refuse: a result with
// a non-zero return code, or (logged) an invalid-request error. It reports
// whether the command was refused.
func (e *env) editRefused(id, what string, in port.EditorInput) bool {
	res, err := e.p.Execute(e.ctx, id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &in})
	switch {
	case err == nil && res.ReturnCode != 0:
		return true
	case err == nil:
		e.t.Errorf("%s: the editor accepted it (return code 0, stdout %q)", what, clip(res.Stdout))
		return false
	case errors.Is(err, port.ErrInvalidRequest):
		e.t.Logf("%s: refused as an invalid request (%v) rather than as a failed call", what, err)
		return true
	}
	e.toolRefused(port.ToolTextEditorExecution, err)
	e.t.Errorf("%s: want a result with a non-zero return code, got error %v", what, err)
	return false
}

// bash runs a shell command that must run.
func (e *env) bash(id, cmd string) port.Result {
	return e.exec(id, port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: cmd})
}

// put uploads a file that must be accepted. A backend without file
// operations skips the check.
func (e *env) put(id, name string, data []byte) port.FileInfo {
	info, err := e.p.PutFile(e.ctx, id, name, strings.NewReader(string(data)))
	if err != nil {
		e.filesUnsupported(err)
		e.t.Fatalf("PutFile(%q): %v", name, err)
	}
	return info
}

// get downloads a file that must exist.
func (e *env) get(id, name string) ([]byte, port.FileInfo) {
	b, info, ok := e.download(id, name)
	if !ok {
		e.t.Fatalf("GetFile(%q): %v", name, port.ErrFileNotFound)
	}
	return b, info
}

// download downloads a file; ok is false when it does not exist. Any other
// failure ends the check.
func (e *env) download(id, name string) (b []byte, info port.FileInfo, ok bool) {
	rc, info, err := e.p.GetFile(e.ctx, id, name)
	switch {
	case errors.Is(err, port.ErrFileNotFound):
		return nil, port.FileInfo{}, false
	case err != nil:
		e.filesUnsupported(err)
		e.t.Fatalf("GetFile(%q): %v", name, err)
	}
	defer rc.Close()
	b, err = io.ReadAll(rc)
	if err != nil {
		e.t.Fatalf("GetFile(%q): reading: %v", name, err)
	}
	return b, info, true
}

// list lists a directory that must exist.
func (e *env) list(id, dir string) []port.FileInfo {
	files, err := e.p.ListFiles(e.ctx, id, dir)
	if err != nil {
		e.filesUnsupported(err)
		e.t.Fatalf("ListFiles(%q): %v", dir, err)
	}
	return files
}

// filesUnsupported skips the check when the backend says it has no file
// operations, which contract v1 makes optional.
func (e *env) filesUnsupported(err error) {
	if errors.Is(err, errors.ErrUnsupported) {
		e.t.Skipf("backend does not offer file operations (%v)", err)
	}
}

// findEntry finds a listing entry by base name: backends differ on whether
// entry paths are relative to the workspace or to the listed directory.
func findEntry(files []port.FileInfo, base string) (port.FileInfo, bool) {
	for _, f := range files {
		if path.Base(strings.TrimSuffix(f.Path, "/")) == base {
			return f, true
		}
	}
	return port.FileInfo{}, false
}

func entryNames(files []port.FileInfo) []string {
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, f.Path)
	}
	return names
}

// py quotes s as a Python string literal (JSON's string syntax is a subset
// of Python's).
func py(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func str(s string) *string { return &s }
func num(n int) *int       { return &n }

func firstLine(s string) string {
	l, _, more := strings.Cut(s, "\n")
	if more {
		l += " ..."
	}
	return l
}

// clip bounds program output quoted in a message.
func clip(s string) string {
	const limit = 300
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}

func describeReq(r port.ExecuteRequest) string {
	switch r.Tool {
	case port.ToolCodeExecution:
		return "code_execution " + py(firstLine(r.Code))
	case port.ToolBashCodeExecution:
		return "bash_code_execution " + py(firstLine(r.Command))
	case port.ToolTextEditorExecution:
		if r.Editor != nil {
			return "text_editor_code_execution " + string(r.Editor.Command) + " " + py(r.Editor.Path)
		}
	}
	return string(r.Tool)
}

// lines splits text into lines without their terminators.
func lines(text string) []string {
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

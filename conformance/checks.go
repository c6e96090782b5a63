package conformance

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/codeport/codeport/port"
)

// Checks returns the suite, in the order RunChecks runs it. Every check
// creates the sessions it needs and destroys them when it ends, so checks
// can run in any order or alone.
func Checks() []Check {
	return append([]Check{
		{"session/state-persists", check(statePersists)},
		{"session/fresh", check(sessionsAreFresh)},
		{"session/destroy", check(destroy)},
		{"session/capacity", check(capacity)},
		{"tool/code_execution", check(codeExecution)},
		{"tool/text_editor_code_execution", check(textEditor)},
		{"tool/bash_code_execution", check(bashTool)},
		{"tool/unknown-kind", check(unknownTool)},
		{"program/exception", check(programException)},
		{"program/system-exit", check(systemExit)},
		{"editor/view", check(editorView)},
		{"editor/create", check(editorCreate)},
		{"editor/str_replace", check(editorStrReplace)},
		{"editor/insert", check(editorInsert)},
		{"editor/undo_edit", check(editorUndo)},
		{"editor/missing-field", check(editorMissingField)},
		{"bash/basics", check(bashBasics)},
		{"files/round-trip", check(filesRoundTrip)},
		{"files/binary", check(filesBinary)},
		{"files/missing", check(filesMissing)},
		{"files/path-escape", check(pathEscape)},
		{"sandbox/etc-passwd", check(etcPasswd)},
		{"errors/unknown-session", check(unknownSession)},
		{"errors/busy", check(busy)},
		{"timeout/partial-output", check(timeoutPartialOutput)},
		{"timeout/session-survives", check(timeoutSessionSurvives)},
		{"timeout/c-loops", check(timeoutCLoops)},
		{"sandbox/forged-completion", check(forgedCompletion)},
	}, slices.Concat(resultChecks(), shellChecks(), packageChecks(), snapshotChecks(), hostileChecks())...)
}

// statePersists: globals, imports, functions and files live on between the
// calls of one session.
func statePersists(e *env) {
	if !e.python() {
		editorStatePersists(e)
		return
	}
	id := e.session()
	e.codeOK(id, "import math\nconformance_x = 41\ndef conformance_f(v):\n    return v + 1\nopen('state.txt', 'w').write('kept')")
	e.expectStdout(id, "print(conformance_f(conformance_x), round(math.pi, 2))", "42 3.14\n")
	e.expectStdout(id, "print(open('state.txt').read())", "kept\n")
	e.expectStdout(id, "conformance_x += 1\nprint(conformance_x)", "42\n")
	e.expectStdout(id, "print(conformance_x)", "42\n")
}

// editorStatePersists is session/state-persists where code_execution is
// not offered: a session's files and its editor's undo history live on
// between its calls.
func editorStatePersists(e *env) {
	e.t.Logf("code_execution not offered: session state is checked through the editor and the file operations")
	e.requireTool(port.ToolTextEditorExecution)
	id := e.session()
	e.editOK(id, port.EditorInput{Command: port.EditorCreate, Path: "state.txt", FileText: str("kept\n")})
	e.editOK(id, port.EditorInput{Command: port.EditorStrReplace, Path: "state.txt", OldStr: str("kept"), NewStr: str("kept twice")})
	if got := e.readText(id, "state.txt"); got != "kept twice\n" {
		e.t.Fatalf("a file created in one call and edited in the next holds %q, want %q", got, "kept twice\n")
	}
	e.editOK(id, port.EditorInput{Command: port.EditorUndoEdit, Path: "state.txt"})
	if got := e.readText(id, "state.txt"); got != "kept\n" {
		e.t.Errorf("undo_edit in a later call: the file holds %q, want %q (the editor's history did not persist)", got, "kept\n")
	}
}

// sessionsAreFresh: nothing of one session is visible in another.
func sessionsAreFresh(e *env) {
	if !e.python() {
		editorSessionsAreFresh(e)
		return
	}
	a := e.session()
	e.codeOK(a, "import colorsys as conformance_mod\nconformance_leak = 1\nopen('leak.txt', 'w').write('from a')")
	b := e.session()
	if a == b {
		e.t.Fatalf("two live sessions share the id %q", a)
	}
	e.expectStdout(b, "import os\nprint('conformance_leak' in globals(), 'conformance_mod' in globals(), os.path.exists('leak.txt'))", "False False False\n")
	// A session created after another was destroyed starts empty too.
	if err := e.p.DestroySession(e.ctx, a); err != nil {
		e.t.Fatalf("DestroySession: %v", err)
	}
	c := e.session()
	e.expectStdout(c, "import os\nprint('conformance_leak' in globals(), os.path.exists('leak.txt'))", "False False\n")
}

// editorSessionsAreFresh is session/fresh where code_execution is not
// offered: no file and no editor history of one session is visible in
// another.
func editorSessionsAreFresh(e *env) {
	e.t.Logf("code_execution not offered: freshness is checked through the editor and the file operations")
	e.requireTool(port.ToolTextEditorExecution)
	a := e.session()
	e.editOK(a, port.EditorInput{Command: port.EditorCreate, Path: "leak.txt", FileText: str("from a\n")})
	e.writeText(a, "leakdir/leak.bin", "from a")
	b := e.session()
	if a == b {
		e.t.Fatalf("two live sessions share the id %q", a)
	}
	fresh := func(id, which string) {
		for _, name := range []string{"leak.txt", "leakdir/leak.bin"} {
			if got := e.readText(id, name); got != "<missing>" {
				e.t.Errorf("%s session reads %q from %s, a file of another session", which, got, name)
			}
		}
		if f, ok := findEntry(e.list(id, "."), "leak.txt"); ok {
			e.t.Errorf("%s session lists %s, a file of another session", which, f.Path)
		}
		e.editRefused(id, which+" session views another session's file", port.EditorInput{Command: port.EditorView, Path: "leak.txt"})
		// An editor history shared between sessions would undo the
		// other session's create here, and succeed.
		e.editRefused(id, which+" session undoes another session's edit", port.EditorInput{Command: port.EditorUndoEdit, Path: "leak.txt"})
	}
	fresh(b, "a second")
	// A session created after another was destroyed starts empty too.
	if err := e.p.DestroySession(e.ctx, a); err != nil {
		e.t.Fatalf("DestroySession: %v", err)
	}
	fresh(e.session(), "a later")
}

// destroy: destroying twice succeeds and the session is gone; so is
// destroying an id that never existed.
func destroy(e *env) {
	if !e.python() {
		editorDestroy(e)
		return
	}
	s, err := e.p.CreateSession(e.ctx, port.CreateSessionRequest{})
	if err != nil {
		e.t.Fatalf("CreateSession: %v", err)
	}
	e.destroyLater(s.ID)
	e.expectStdout(s.ID, "print('alive')", "alive\n")
	for i := range 2 {
		if err := e.p.DestroySession(e.ctx, s.ID); err != nil {
			e.t.Errorf("DestroySession #%d: %v", i+1, err)
		}
	}
	_, err = e.p.Execute(e.ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)"})
	if !errors.Is(err, port.ErrSessionNotFound) {
		e.t.Errorf("Execute in a destroyed session: want ErrSessionNotFound, got %v", err)
	}
	if err := e.p.DestroySession(e.ctx, "conformance-never-created"); err != nil {
		e.t.Errorf("DestroySession of an unknown id: want success, got %v", err)
	}
}

// editorDestroy is session/destroy where code_execution is not offered: the
// session is shown alive, then gone, through the editor and the file
// operations.
func editorDestroy(e *env) {
	e.t.Logf("code_execution not offered: the session is checked through the editor and the file operations")
	e.requireTool(port.ToolTextEditorExecution)
	s, err := e.p.CreateSession(e.ctx, port.CreateSessionRequest{})
	if err != nil {
		e.t.Fatalf("CreateSession: %v", err)
	}
	e.destroyLater(s.ID)
	e.editOK(s.ID, port.EditorInput{Command: port.EditorCreate, Path: "alive.txt", FileText: str("alive\n")})
	for i := range 2 {
		if err := e.p.DestroySession(e.ctx, s.ID); err != nil {
			e.t.Errorf("DestroySession #%d: %v", i+1, err)
		}
	}
	in := port.EditorInput{Command: port.EditorView, Path: "alive.txt"}
	_, err = e.p.Execute(e.ctx, s.ID, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &in})
	if !errors.Is(err, port.ErrSessionNotFound) {
		e.t.Errorf("Execute in a destroyed session: want ErrSessionNotFound, got %v", err)
	}
	rc, _, err := e.p.GetFile(e.ctx, s.ID, "alive.txt")
	if err == nil {
		rc.Close()
	}
	if !errors.Is(err, port.ErrSessionNotFound) && !errors.Is(err, errors.ErrUnsupported) {
		e.t.Errorf("GetFile in a destroyed session: want ErrSessionNotFound, got %v", err)
	}
	if err := e.p.DestroySession(e.ctx, "conformance-never-created"); err != nil {
		e.t.Errorf("DestroySession of an unknown id: want success, got %v", err)
	}
}

// maxCapacityChecked is the largest session limit the capacity check fills.
const maxCapacityChecked = 16

// capacity: past the session limit, CreateSession is refused with a
// *port.CapacityError carrying a retry hint, and a released session frees
// its slot.
func capacity(e *env) {
	limit, source := e.t.Target().MaxSessions, "Target.MaxSessions"
	if limit <= 0 {
		caps, err := e.p.Describe(e.ctx)
		if err != nil {
			e.t.Skipf("the session limit is unknown (Describe failed: %v); set Target.MaxSessions (--max-sessions)", err)
		}
		limit, source = caps.Limits.MaxSessions, "Describe"
	}
	switch {
	case limit <= 0:
		e.t.Skipf("the session limit is unknown: set Target.MaxSessions (--max-sessions) or report Limits.MaxSessions")
	case limit > maxCapacityChecked:
		e.t.Skipf("the session limit (%d, from %s) is above %d; filling it would take too many sessions", limit, source, maxCapacityChecked)
	}
	var ids []string
	refused := false
	for i := 0; i <= limit && !refused; i++ {
		s, err := e.p.CreateSession(e.ctx, port.CreateSessionRequest{})
		if err == nil {
			ids = append(ids, s.ID)
			e.destroyLater(s.ID)
			continue
		}
		refused = true
		var ce *port.CapacityError
		switch {
		case !errors.As(err, &ce):
			e.t.Fatalf("session %d (limit %d, from %s): want a *port.CapacityError, got %v", i+1, limit, source, err)
		case !errors.Is(err, port.ErrAtCapacity):
			e.t.Errorf("the capacity error does not match port.ErrAtCapacity: %v", err)
		case ce.RetryAfter <= 0:
			e.t.Errorf("the capacity error has no retry-after hint: %v", err)
		}
	}
	if !refused {
		e.t.Fatalf("created %d sessions without a refusal, but the limit is %d (from %s)", len(ids), limit, source)
	}
	if len(ids) < limit {
		e.t.Logf("refused after %d sessions although the limit is %d: other clients may hold sessions", len(ids), limit)
	}
	if len(ids) == 0 {
		return
	}
	// Releasing one session makes room for another.
	if err := e.p.DestroySession(e.ctx, ids[0]); err != nil {
		e.t.Fatalf("DestroySession: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := e.p.CreateSession(e.ctx, port.CreateSessionRequest{})
		if err == nil {
			e.destroyLater(s.ID)
			return
		}
		if !errors.Is(err, port.ErrAtCapacity) || time.Now().After(deadline) {
			e.t.Fatalf("CreateSession after releasing a session: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// codeExecution: Python runs, stdout and stderr are captured, the tool use
// id is echoed or generated.
func codeExecution(e *env) {
	e.requireTool(port.ToolCodeExecution)
	id := e.session()
	const useID = "srvtoolu_conformance_1"
	res := e.exec(id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(6 * 7)", ToolUseID: useID})
	if !sameOutput(res.Stdout, "42\n") || res.ReturnCode != 0 {
		e.t.Errorf("print(6 * 7): stdout %q, return code %d, stderr %q", res.Stdout, res.ReturnCode, clip(res.Stderr))
	}
	if res.Outcome != "" && res.Outcome != port.OutcomeCompleted {
		e.t.Errorf("print(6 * 7): outcome %q, want %q", res.Outcome, port.OutcomeCompleted)
	}
	if res.ToolUseID != useID {
		e.t.Errorf("tool use id %q was not echoed: got %q", useID, res.ToolUseID)
	}
	if res.Tool != "" && res.Tool != port.ToolCodeExecution {
		e.t.Errorf("result reports tool %q, want %q", res.Tool, port.ToolCodeExecution)
	}
	res = e.code(id, "import sys\nprint('to-err', file=sys.stderr)")
	if res.Stdout != "" || !strings.Contains(res.Stderr, "to-err") || res.ReturnCode != 0 {
		e.t.Errorf("print to stderr: stdout %q, stderr %q, return code %d", res.Stdout, clip(res.Stderr), res.ReturnCode)
	}
	if res.ToolUseID == "" {
		e.t.Errorf("no tool use id generated for a call without one")
	}
	res = e.code(id, "x = 1")
	if res.Stdout != "" || res.ReturnCode != 0 {
		e.t.Errorf("a silent program: stdout %q, return code %d, stderr %q", res.Stdout, res.ReturnCode, clip(res.Stderr))
	}
}

// textEditor: the editor tool runs when offered, on the files the
// interpreter sees.
func textEditor(e *env) {
	e.requireTool(port.ToolTextEditorExecution)
	id := e.session()
	e.editOK(id, port.EditorInput{Command: port.EditorCreate, Path: "editor.txt", FileText: str("hello editor\n")})
	res := e.editOK(id, port.EditorInput{Command: port.EditorView, Path: "editor.txt"})
	if !strings.Contains(res.Stdout, "hello editor") {
		e.t.Errorf("view: stdout %q lacks the file's text", clip(res.Stdout))
	}
	if got := e.readText(id, "editor.txt"); got != "hello editor\n" {
		e.t.Errorf("the file the editor created reads back as %q", got)
	}
}

// bashTool: the shell tool runs when offered.
func bashTool(e *env) {
	e.requireTool(port.ToolBashCodeExecution)
	id := e.session()
	res := e.bash(id, "echo conformance")
	if !sameOutput(res.Stdout, "conformance\n") || res.ReturnCode != 0 {
		e.t.Errorf("echo conformance: stdout %q, return code %d, stderr %q", res.Stdout, res.ReturnCode, clip(res.Stderr))
	}
}

// unknownTool: an unknown tool kind is refused, not run.
func unknownTool(e *env) {
	id := e.session()
	res, err := e.p.Execute(e.ctx, id, port.ExecuteRequest{Tool: "conformance_unknown_tool", Code: "print(1)", Command: "echo 1"})
	switch {
	case errors.Is(err, port.ErrUnsupportedTool):
		e.t.Logf("refused with ErrUnsupportedTool (HTTP 400): %v", err)
	case errors.Is(err, port.ErrInvalidRequest):
		e.t.Logf("refused with ErrInvalidRequest (HTTP 422): %v", err)
	case err == nil:
		e.t.Errorf("an unknown tool kind ran: return code %d, stdout %q", res.ReturnCode, clip(res.Stdout))
	default:
		e.t.Errorf("unknown tool kind: want ErrUnsupportedTool or ErrInvalidRequest, got %v", err)
	}
	// The session is unharmed.
	e.alive(id)
}

// programException: a program that raises is a result, not an error, with
// a non-zero return code and the traceback on stderr.
func programException(e *env) {
	e.requireTool(port.ToolCodeExecution)
	id := e.session()
	e.codeOK(id, "conformance_kept = 'yes'")
	res := e.code(id, "print('partial')\ndef conformance_fail():\n    raise ValueError('conformance boom')\nconformance_fail()")
	if res.ReturnCode == 0 {
		e.t.Errorf("a raising program has return code 0")
	}
	if res.Outcome == port.OutcomeCompleted {
		e.t.Errorf("a raising program has outcome %q", res.Outcome)
	}
	for _, want := range []string{"Traceback", "ValueError", "conformance boom"} {
		if !strings.Contains(res.Stderr, want) {
			e.t.Errorf("stderr lacks %q: %q", want, clip(res.Stderr))
		}
	}
	if !sameOutput(res.Stdout, "partial\n") {
		e.t.Errorf("stdout printed before the exception: got %q, want %q", clip(res.Stdout), "partial\n")
	}
	e.expectStdout(id, "print(conformance_kept)", "yes\n")
	res = e.code(id, "def broken(:\n    pass")
	if res.ReturnCode == 0 || !strings.Contains(res.Stderr, "SyntaxError") {
		e.t.Errorf("a syntax error: return code %d, stderr %q", res.ReturnCode, clip(res.Stderr))
	}
}

// systemExit: SystemExit(n) sets the return code n.
func systemExit(e *env) {
	e.requireTool(port.ToolCodeExecution)
	id := e.session()
	res := e.code(id, "import sys\nprint('bye')\nsys.exit(3)")
	if res.ReturnCode != 3 {
		e.t.Errorf("sys.exit(3): return code %d, want 3 (stderr %q)", res.ReturnCode, clip(res.Stderr))
	}
	if res.Outcome == port.OutcomeCompleted {
		e.t.Errorf("sys.exit(3): outcome %q", res.Outcome)
	}
	if !sameOutput(res.Stdout, "bye\n") {
		e.t.Errorf("sys.exit(3): stdout %q, want %q", clip(res.Stdout), "bye\n")
	}
	e.expectStdout(id, "print('after exit')", "after exit\n")
}

// editorView: a whole file, a line range (with -1 for the end) and a
// directory.
func editorView(e *env) {
	e.requireTool(port.ToolTextEditorExecution)
	id := e.session()
	e.writeText(id, "view.txt", "line one\nline two\nline three\nline four\n")
	e.writeText(id, "viewdir/alpha.txt", "a\n")
	e.writeText(id, "viewdir/sub/beta.txt", "b\n")

	res := e.editOK(id, port.EditorInput{Command: port.EditorView, Path: "view.txt"})
	for _, want := range []string{"line one", "line two", "line three", "line four"} {
		if !strings.Contains(res.Stdout, want) {
			e.t.Errorf("view: stdout lacks %q: %q", want, clip(res.Stdout))
		}
	}
	for _, c := range []struct {
		r        []int
		in, out  []string
		describe string
	}{
		{[]int{2, 3}, []string{"line two", "line three"}, []string{"line one", "line four"}, "[2, 3]"},
		{[]int{3, -1}, []string{"line three", "line four"}, []string{"line one", "line two"}, "[3, -1]"},
	} {
		res := e.editOK(id, port.EditorInput{Command: port.EditorView, Path: "view.txt", ViewRange: c.r})
		for _, want := range c.in {
			if !strings.Contains(res.Stdout, want) {
				e.t.Errorf("view_range %s: stdout lacks %q: %q", c.describe, want, clip(res.Stdout))
			}
		}
		for _, bad := range c.out {
			if strings.Contains(res.Stdout, bad) {
				e.t.Errorf("view_range %s: stdout shows %q: %q", c.describe, bad, clip(res.Stdout))
			}
		}
	}
	res = e.editOK(id, port.EditorInput{Command: port.EditorView, Path: "viewdir"})
	for _, want := range []string{"alpha.txt", "sub"} {
		if !strings.Contains(res.Stdout, want) {
			e.t.Errorf("view of a directory: stdout lacks %q: %q", want, clip(res.Stdout))
		}
	}
	e.editRefused(id, "view of a missing file", port.EditorInput{Command: port.EditorView, Path: "no-such-file.txt"})
}

// editorCreate: create writes a new file and refuses an existing one.
func editorCreate(e *env) {
	e.requireTool(port.ToolTextEditorExecution)
	id := e.session()
	e.editOK(id, port.EditorInput{Command: port.EditorCreate, Path: "new.txt", FileText: str("alpha\nbeta\n")})
	if got := e.readText(id, "new.txt"); got != "alpha\nbeta\n" {
		e.t.Fatalf("create: the file holds %q, want %q", got, "alpha\nbeta\n")
	}
	if e.editRefused(id, "create over an existing file", port.EditorInput{Command: port.EditorCreate, Path: "new.txt", FileText: str("replaced\n")}) {
		if got := e.readText(id, "new.txt"); got != "alpha\nbeta\n" {
			e.t.Errorf("a refused create changed the file to %q", got)
		}
	}
}

// editorStrReplace: str_replace replaces text that occurs once, refuses
// text that occurs never or more than once, and takes an empty new_str.
func editorStrReplace(e *env) {
	e.requireTool(port.ToolTextEditorExecution)
	id := e.session()
	e.writeText(id, "sr.txt", "x = 1\ny = 2\n")
	e.editOK(id, port.EditorInput{Command: port.EditorStrReplace, Path: "sr.txt", OldStr: str("y = 2"), NewStr: str("y = 40")})
	if got := e.readText(id, "sr.txt"); got != "x = 1\ny = 40\n" {
		e.t.Fatalf("str_replace: the file holds %q, want %q", got, "x = 1\ny = 40\n")
	}
	if e.editRefused(id, "str_replace of text not in the file", port.EditorInput{Command: port.EditorStrReplace, Path: "sr.txt", OldStr: str("zzz"), NewStr: str("w")}) {
		if got := e.readText(id, "sr.txt"); got != "x = 1\ny = 40\n" {
			e.t.Errorf("a refused str_replace changed the file to %q", got)
		}
	}
	e.writeText(id, "dup.txt", "same\nsame\n")
	if e.editRefused(id, "str_replace of text that occurs twice", port.EditorInput{Command: port.EditorStrReplace, Path: "dup.txt", OldStr: str("same"), NewStr: str("other")}) {
		if got := e.readText(id, "dup.txt"); got != "same\nsame\n" {
			e.t.Errorf("a refused str_replace changed the file to %q", got)
		}
	}
	e.editOK(id, port.EditorInput{Command: port.EditorStrReplace, Path: "sr.txt", OldStr: str("x = 1\n"), NewStr: str("")})
	if got := e.readText(id, "sr.txt"); got != "y = 40\n" {
		e.t.Errorf("str_replace with an empty new_str: the file holds %q, want %q", got, "y = 40\n")
	}
}

// editorInsert: insert puts lines after line n (0 for the top) and refuses
// a line outside the file.
func editorInsert(e *env) {
	e.requireTool(port.ToolTextEditorExecution)
	id := e.session()
	e.writeText(id, "ins.txt", "one\ntwo\n")
	steps := []struct {
		line int
		text string
		want []string
	}{
		{1, "one and a half", []string{"one", "one and a half", "two"}},
		{0, "zero", []string{"zero", "one", "one and a half", "two"}},
		{4, "last", []string{"zero", "one", "one and a half", "two", "last"}},
	}
	for _, s := range steps {
		e.editOK(id, port.EditorInput{Command: port.EditorInsert, Path: "ins.txt", InsertLine: num(s.line), NewStr: str(s.text)})
		if got := lines(e.readText(id, "ins.txt")); !slices.Equal(got, s.want) {
			e.t.Fatalf("insert %q after line %d: the file's lines are %q, want %q", s.text, s.line, got, s.want)
		}
	}
	before := e.readText(id, "ins.txt")
	for _, bad := range []int{99, -2} {
		if e.editRefused(id, fmt.Sprintf("insert after line %d of a 5-line file", bad), port.EditorInput{Command: port.EditorInsert, Path: "ins.txt", InsertLine: num(bad), NewStr: str("nope")}) {
			if got := e.readText(id, "ins.txt"); got != before {
				e.t.Errorf("a refused insert changed the file to %q", got)
			}
		}
	}
}

// editorUndo: undo_edit reverts the file's last edit.
func editorUndo(e *env) {
	e.requireTool(port.ToolTextEditorExecution)
	id := e.session()
	e.writeText(id, "undo.txt", "first\n")
	e.editOK(id, port.EditorInput{Command: port.EditorStrReplace, Path: "undo.txt", OldStr: str("first"), NewStr: str("second")})
	e.editOK(id, port.EditorInput{Command: port.EditorInsert, Path: "undo.txt", InsertLine: num(1), NewStr: str("third")})
	if got := lines(e.readText(id, "undo.txt")); !slices.Equal(got, []string{"second", "third"}) {
		e.t.Fatalf("before undo_edit the file's lines are %q", got)
	}
	e.editOK(id, port.EditorInput{Command: port.EditorUndoEdit, Path: "undo.txt"})
	if got := e.readText(id, "undo.txt"); got != "second\n" {
		e.t.Errorf("undo_edit: the file holds %q, want %q (the insert reverted, the str_replace kept)", got, "second\n")
	}
}

// editorMissingField: a command without a field it requires is an invalid
// request.
func editorMissingField(e *env) {
	e.requireTool(port.ToolTextEditorExecution)
	id := e.session()
	e.writeText(id, "mf.txt", "content\n")
	cases := []struct {
		what string
		in   port.EditorInput
	}{
		{"create without file_text", port.EditorInput{Command: port.EditorCreate, Path: "mf-new.txt"}},
		{"str_replace without old_str", port.EditorInput{Command: port.EditorStrReplace, Path: "mf.txt", NewStr: str("x")}},
		{"str_replace without new_str", port.EditorInput{Command: port.EditorStrReplace, Path: "mf.txt", OldStr: str("content")}},
		{"insert without insert_line", port.EditorInput{Command: port.EditorInsert, Path: "mf.txt", NewStr: str("x")}},
		{"insert without new_str", port.EditorInput{Command: port.EditorInsert, Path: "mf.txt", InsertLine: num(0)}},
		{"view without path", port.EditorInput{Command: port.EditorView}},
	}
	for _, c := range cases {
		res, err := e.p.Execute(e.ctx, id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &c.in})
		switch {
		case errors.Is(err, port.ErrInvalidRequest):
		case err == nil:
			e.t.Errorf("%s: want ErrInvalidRequest, got a result (return code %d, stderr %q)", c.what, res.ReturnCode, clip(res.Stderr))
		default:
			e.toolRefused(port.ToolTextEditorExecution, err)
			e.t.Errorf("%s: want ErrInvalidRequest, got %v", c.what, err)
		}
	}
	if got := e.readText(id, "mf.txt"); got != "content\n" {
		e.t.Errorf("refused commands changed the file to %q", got)
	}
}

// bashBasics: output, pipes, exit status, unknown commands and the working
// directory of the shell tool. The commands use shell builtins only, so a
// shell without coreutils passes too.
func bashBasics(e *env) {
	e.requireTool(port.ToolBashCodeExecution)
	id := e.session()
	const anyStdout = "\x00any"
	expect := func(cmd, stdout string, rc int) port.Result {
		res := e.bash(id, cmd)
		if (stdout != anyStdout && strings.TrimSpace(res.Stdout) != stdout) || res.ReturnCode != rc {
			e.t.Errorf("bash %q: stdout %q, return code %d (stderr %q); want stdout %q, return code %d",
				cmd, clip(res.Stdout), res.ReturnCode, clip(res.Stderr), stdout, rc)
		}
		return res
	}
	expect("echo hello", "hello", 0)
	expect("printf 'a\\nb\\n' | while read -r l; do echo \"x$l\"; done", "xa\nxb", 0)
	expect("(exit 3)", "", 3)
	expect("false", "", 1)
	if res := expect("conformance_no_such_command_xyz", anyStdout, 127); res.Stderr == "" {
		e.t.Errorf("an unknown command left stderr empty")
	}
	if res := e.bash(id, "echo oops >&2"); !strings.Contains(res.Stderr, "oops") {
		e.t.Errorf("echo to stderr: stderr %q", clip(res.Stderr))
	}
	// The shell starts in the workspace, where the interpreter works.
	e.writeText(id, "cwd-marker.txt", "marker\n")
	expect("read -r l < cwd-marker.txt && echo \"$l\"", "marker", 0)
	caps, capsErr := e.describe()
	if e.python() {
		pycwd := strings.TrimSpace(e.codeOK(id, "import os\nprint(os.getcwd())"))
		expect("pwd", pycwd, 0)
		if capsErr == nil && caps.WorkingDirectory != "" && caps.WorkingDirectory != pycwd {
			e.t.Errorf("Describe says the working directory is %q; programs run in %q", caps.WorkingDirectory, pycwd)
		}
	} else if capsErr == nil && caps.WorkingDirectory != "" {
		expect("pwd", caps.WorkingDirectory, 0)
	}
	// Files the shell writes are the interpreter's.
	expect("echo from-bash > bash-out.txt", "", 0)
	if got := e.readText(id, "bash-out.txt"); got != "from-bash\n" {
		e.t.Errorf("the file the shell wrote reads back as %q", got)
	}
}

// filesRoundTrip: an uploaded file is listed, downloaded intact and seen by
// the program; a file the program writes can be downloaded.
func filesRoundTrip(e *env) {
	id := e.session()
	data := []byte("hello files\n")
	info := e.put(id, "data/hello.txt", data)
	if info.Size != 0 && info.Size != int64(len(data)) {
		e.t.Errorf("PutFile reports size %d, want %d", info.Size, len(data))
	}
	root := e.list(id, ".")
	if d, ok := findEntry(root, "data"); !ok {
		// The contract does not say a listing shows subdirectories; the
		// file itself must be reachable (below).
		e.t.Logf("ListFiles(\".\") does not show the directory data: %q", entryNames(root))
	} else if !d.IsDir {
		e.t.Logf("ListFiles(\".\") does not mark data as a directory")
	}
	sub := e.list(id, "data")
	if f, ok := findEntry(sub, "hello.txt"); !ok {
		e.t.Errorf("ListFiles(\"data\") lacks hello.txt: %q", entryNames(sub))
	} else if f.Size != int64(len(data)) {
		e.t.Errorf("ListFiles(\"data\") reports hello.txt as %d bytes, want %d", f.Size, len(data))
	}
	got, ginfo := e.get(id, "data/hello.txt")
	if !bytes.Equal(got, data) {
		e.t.Errorf("GetFile returned %q, want %q", got, data)
	}
	if ginfo.Size != 0 && ginfo.Size != int64(len(data)) {
		e.t.Errorf("GetFile reports size %d, want %d", ginfo.Size, len(data))
	}
	if e.python() {
		if got := e.readText(id, "data/hello.txt"); got != string(data) {
			e.t.Errorf("the program reads %q from the uploaded file", got)
		}
		e.codeOK(id, "open('from-python.txt', 'w').write('written by python')")
		if got, _ := e.get(id, "from-python.txt"); string(got) != "written by python" {
			e.t.Errorf("GetFile of the program's file returned %q", got)
		}
		if _, ok := findEntry(e.list(id, "."), "from-python.txt"); !ok {
			e.t.Errorf("ListFiles(\".\") lacks the program's file from-python.txt")
		}
	} else if e.offers(port.ToolTextEditorExecution) {
		// No program runs here: the editor is the other side of the files.
		e.t.Logf("code_execution not offered: the files are checked against the editor")
		res := e.editOK(id, port.EditorInput{Command: port.EditorView, Path: "data/hello.txt"})
		if !strings.Contains(res.Stdout, "hello files") {
			e.t.Errorf("the editor's view of the uploaded file lacks its text: %q", clip(res.Stdout))
		}
		e.editOK(id, port.EditorInput{Command: port.EditorCreate, Path: "from-editor.txt", FileText: str("written by the editor\n")})
		if got, _ := e.get(id, "from-editor.txt"); string(got) != "written by the editor\n" {
			e.t.Errorf("GetFile of the editor's file returned %q", got)
		}
		if _, ok := findEntry(e.list(id, "."), "from-editor.txt"); !ok {
			e.t.Errorf("ListFiles(\".\") lacks the editor's file from-editor.txt")
		}
	} else {
		e.t.Logf("neither code_execution nor the editor offered: only the file operations were checked")
	}
	// An upload replaces an existing file.
	e.put(id, "data/hello.txt", []byte("replaced"))
	if got, _ := e.get(id, "data/hello.txt"); string(got) != "replaced" {
		e.t.Errorf("after a second upload GetFile returned %q, want %q", got, "replaced")
	}
}

// filesBinary: every byte value survives upload, the program and download.
func filesBinary(e *env) {
	id := e.session()
	var data []byte
	for range 4 {
		for b := range 256 {
			data = append(data, byte(b))
		}
	}
	data = append(data, "\r\n\x00\xff\xfe\xc3\x28 not utf-8\n"...)
	e.put(id, "bin/all.bin", data)
	got, _ := e.get(id, "bin/all.bin")
	if !bytes.Equal(got, data) {
		e.t.Errorf("binary round trip: got %d bytes (sha256 %s), want %d bytes (sha256 %s)", len(got), sum(got), len(data), sum(data))
	}
	if !e.python() {
		e.t.Logf("code_execution not offered: no program's view of binary files was checked")
		return
	}
	pysum := strings.TrimSpace(e.codeOK(id, "import hashlib\nprint(hashlib.sha256(open('bin/all.bin', 'rb').read()).hexdigest())"))
	if pysum != sum(data) {
		e.t.Errorf("the program sees an uploaded binary file with sha256 %s, want %s", pysum, sum(data))
	}
	e.codeOK(id, "open('py.bin', 'wb').write(bytes(range(256)) * 4)")
	if got, _ := e.get(id, "py.bin"); !bytes.Equal(got, data[:1024]) {
		e.t.Errorf("a binary file the program wrote downloads as %d bytes (sha256 %s), want 1024 (sha256 %s)", len(got), sum(got), sum(data[:1024]))
	}
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// filesMissing: downloading a file that does not exist is ErrFileNotFound.
func filesMissing(e *env) {
	id := e.session()
	_, _, err := e.p.GetFile(e.ctx, id, "no-such-file.txt")
	e.filesUnsupported(err)
	if !errors.Is(err, port.ErrFileNotFound) {
		e.t.Errorf("GetFile of a missing file: want ErrFileNotFound, got %v", err)
	}
}

// pathEscape: every file operation refuses paths that lead out of the
// workspace, and the editor does too.
func pathEscape(e *env) {
	id := e.session()
	escapes := []string{"../escape.txt", "a/../../escape.txt", "../../../../../../etc/passwd"}
	for _, p := range escapes {
		_, err := e.p.PutFile(e.ctx, id, p, strings.NewReader("escaped"))
		e.filesUnsupported(err)
		if !errors.Is(err, port.ErrPathEscapesWorkspace) {
			e.t.Errorf("PutFile(%q): want ErrPathEscapesWorkspace, got %v", p, err)
		}
		rc, _, err := e.p.GetFile(e.ctx, id, p)
		if err == nil {
			rc.Close()
		}
		if !errors.Is(err, port.ErrPathEscapesWorkspace) {
			e.t.Errorf("GetFile(%q): want ErrPathEscapesWorkspace, got %v", p, err)
		}
	}
	for _, d := range []string{"..", "../..", "a/../.."} {
		if _, err := e.p.ListFiles(e.ctx, id, d); !errors.Is(err, port.ErrPathEscapesWorkspace) {
			e.t.Errorf("ListFiles(%q): want ErrPathEscapesWorkspace, got %v", d, err)
		}
	}
	caps, err := e.p.Describe(e.ctx)
	if err == nil && !slices.Contains(caps.Tools, port.ToolTextEditorExecution) {
		e.t.Logf("editor not offered: its path checks were not run")
		return
	}
	for _, p := range escapes {
		in := port.EditorInput{Command: port.EditorView, Path: p}
		res, err := e.p.Execute(e.ctx, id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &in})
		switch {
		case err == nil && res.ReturnCode != 0:
		case err == nil:
			e.t.Errorf("editor view %q succeeded: stdout %q", p, clip(res.Stdout))
		case errors.Is(err, port.ErrPathEscapesWorkspace), errors.Is(err, port.ErrInvalidRequest):
			e.t.Logf("editor view %q refused with an error rather than a failed call: %v", p, err)
		case errors.Is(err, port.ErrUnsupportedTool):
			e.t.Logf("editor refused (%v): its path checks were not run", err)
			return
		default:
			e.t.Errorf("editor view %q: want a result with a non-zero return code, got %v", p, err)
		}
		if strings.Contains(res.Stdout, "root:") {
			e.t.Errorf("editor view %q shows the host's password file", p)
		}
	}
	in := port.EditorInput{Command: port.EditorCreate, Path: "../escape.txt", FileText: str("escaped")}
	res, err := e.p.Execute(e.ctx, id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &in})
	if err == nil && res.ReturnCode == 0 {
		e.t.Errorf("editor create \"../escape.txt\" succeeded: stdout %q", clip(res.Stdout))
	}
}

// etcPasswd: a program cannot read the host's /etc/passwd.
func etcPasswd(e *env) {
	e.requireTool(port.ToolCodeExecution)
	id := e.session()
	for _, p := range []string{"/etc/passwd", strings.Repeat("../", 12) + "etc/passwd"} {
		out := e.codeOK(id, "try:\n    data = open("+py(p)+").read()\n    print('READ', len(data), 'root:' in data)\n"+
			"except Exception as e:\n    print('DENIED', type(e).__name__)")
		if !strings.HasPrefix(out, "DENIED") {
			e.t.Errorf("the program read %s: %q", p, clip(out))
		}
	}
}

// unknownSession: Execute in a session that does not exist is
// ErrSessionNotFound.
func unknownSession(e *env) {
	req := port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)"}
	if !e.python() {
		// The Port refuses a kind not offered before it looks for the
		// session: ask with one that is.
		e.requireTool(port.ToolTextEditorExecution)
		req = port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{Command: port.EditorView, Path: "."}}
	}
	for _, id := range []string{"conformance-no-such-session", "00000000-0000-4000-8000-000000000000"} {
		_, err := e.p.Execute(e.ctx, id, req)
		if req.Tool == port.ToolTextEditorExecution {
			e.toolRefused(req.Tool, err)
		}
		if !errors.Is(err, port.ErrSessionNotFound) {
			e.t.Errorf("Execute in unknown session %q: want ErrSessionNotFound, got %v", id, err)
		}
	}
}

// busy: a second call on a session that is running one is refused with
// ErrSessionBusy (or queued until the first ends), and the first call is not
// disturbed.
func busy(e *env) {
	if !e.python() {
		busyStalled(e)
		return
	}
	id := e.session()
	e.codeOK(id, "import time")
	// The long call announces in the workspace that it is running, so that
	// a probe that completes before it ends is known to have overlapped it.
	const longCode = "import time\nopen('busy-started.txt', 'w').write('1')\ntime.sleep(3)\n" +
		"open('busy-ended.txt', 'w').write(repr(time.time()))\nprint('slept')"
	var (
		wg      sync.WaitGroup
		longRes port.Result
		longErr error
		retries int
	)
	longDone := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(longDone)
		// The prober below may hold the session for a moment: retry until
		// the long call itself is admitted.
		for {
			longRes, longErr = e.p.Execute(e.ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: longCode, Timeout: 30 * time.Second})
			if !errors.Is(longErr, port.ErrSessionBusy) || retries >= 200 || e.ctx.Err() != nil {
				return
			}
			retries++
			time.Sleep(10 * time.Millisecond)
		}
	}()
	// Contract v1 promises one call at a time per session. codeport refuses
	// a second call as busy; a backend may instead queue it until the first
	// has finished. Either is conforming; running both at once is not.
	e.waitForFile(id, "busy-started.txt", longDone)
	// A probe that runs tells the time it ran, which says whether it was
	// queued behind the long call or ran beside it.
	sawBusy, probeRan := false, ""
	var lastErr error
	select {
	case <-longDone:
		lastErr = errors.New("the long call ended before the probe could be sent")
	default:
		res, err := e.p.Execute(e.ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "import time\nprint(repr(time.time()))"})
		switch {
		case errors.Is(err, port.ErrSessionBusy):
			sawBusy = true
		case err == nil:
			probeRan = strings.TrimSpace(res.Stdout)
		default:
			lastErr = err
		}
	}
	wg.Wait()
	switch {
	case sawBusy:
	case probeRan != "":
		ended := e.readText(id, "busy-ended.txt")
		ranAt, err1 := strconv.ParseFloat(probeRan, 64)
		endedAt, err2 := strconv.ParseFloat(ended, 64)
		switch {
		case err1 != nil || err2 != nil:
			e.t.Errorf("could not tell when the calls ran (probe printed %q, the long call wrote %q)", clip(probeRan), clip(ended))
		case ranAt >= endedAt:
			e.t.Logf("the backend queues a second call on a busy session instead of refusing it as busy")
		default:
			e.t.Errorf("a second call ran while the session was running a 3 s call (%.3f s before it ended): calls on one session overlapped", endedAt-ranAt)
		}
	default:
		e.t.Errorf("a second call on a busy session: want ErrSessionBusy or a queued call, got %v", lastErr)
	}
	if longErr != nil {
		e.t.Errorf("the long call failed (after %d busy retries): %v", retries, longErr)
	} else if !sameOutput(longRes.Stdout, "slept\n") || longRes.ReturnCode != 0 {
		e.t.Errorf("the long call: stdout %q, return code %d, stderr %q", clip(longRes.Stdout), longRes.ReturnCode, clip(longRes.Stderr))
	}
}

// busyStalled is errors/busy where code_execution is not offered: the call
// that lasts is an editor call that Target.Stall holds.
func busyStalled(e *env) {
	e.requireTool(port.ToolTextEditorExecution)
	stall := e.t.Target().Stall
	if stall == nil {
		e.t.Skipf("code_execution is not offered and Target.Stall is not set: no call can be made to last, so a busy session cannot be checked")
	}
	id := e.session()
	started, release := stall(id)
	e.t.Cleanup(release)
	exec := func(in port.EditorInput) (port.Result, error) {
		return e.p.Execute(e.ctx, id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &in, Timeout: 30 * time.Second})
	}
	var (
		longRes port.Result
		longErr error
	)
	longDone := make(chan struct{})
	go func() {
		defer close(longDone)
		longRes, longErr = exec(port.EditorInput{Command: port.EditorCreate, Path: "busy.txt", FileText: str("held\n")})
	}()
	select {
	case <-started:
	case <-longDone:
		e.t.Fatalf("Target.Stall: the call returned without stalling (return code %d, error %v)", longRes.ReturnCode, longErr)
	case <-time.After(10 * time.Second):
		release()
		<-longDone
		e.t.Fatalf("Target.Stall: the call did not stall within 10 s")
	}
	// The session is running the stalled call. A probe that has not come
	// back after a while is taken to be queued behind it.
	type answer struct {
		res port.Result
		err error
	}
	probe := make(chan answer, 1)
	go func() {
		res, err := exec(port.EditorInput{Command: port.EditorCreate, Path: "busy-probe.txt", FileText: str("probe\n")})
		probe <- answer{res, err}
	}()
	var got answer
	queued := false
	select {
	case got = <-probe:
	case <-time.After(2 * time.Second):
		queued = true
	}
	release()
	<-longDone
	if queued {
		got = <-probe
	}
	switch {
	case !queued && errors.Is(got.err, port.ErrSessionBusy):
	case !queued && got.err == nil:
		e.t.Errorf("a second call ran while the session was running a stalled call: calls on one session overlapped")
	case queued && got.err == nil:
		e.t.Logf("the backend queues a second call on a busy session instead of refusing it as busy")
	default:
		e.t.Errorf("a second call on a busy session: want ErrSessionBusy or a queued call, got %v", got.err)
	}
	if longErr != nil {
		e.t.Errorf("the stalled call failed: %v", longErr)
	} else if longRes.ReturnCode != 0 {
		e.t.Errorf("the stalled call: return code %d, stderr %q", longRes.ReturnCode, clip(longRes.Stderr))
	}
	if got := e.readText(id, "busy.txt"); got != "held\n" {
		e.t.Errorf("the file the stalled call created holds %q, want %q", got, "held\n")
	}
}

// timeoutCode prints, then loops forever.
const timeoutCode = "print('before', flush=True)\nwhile True:\n    pass"

// runTimeout runs timeoutCode with a 1 s timeout and checks it was stopped.
func (e *env) runTimeout(id string) port.Result {
	start := time.Now()
	res := e.exec(id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: timeoutCode, Timeout: time.Second})
	took := time.Since(start)
	switch {
	case res.Outcome == port.OutcomeTimedOut:
		if res.ReturnCode == 0 {
			e.t.Errorf("timed out with return code 0")
		}
	case res.ReturnCode != 0 && res.Outcome != port.OutcomeCompleted:
		e.t.Logf("the timeout is reported with outcome %q and return code %d, not %q: the backend may not report outcomes", res.Outcome, res.ReturnCode, port.OutcomeTimedOut)
	default:
		e.t.Fatalf("an endless loop with a 1 s timeout: outcome %q, return code %d, stderr %q", res.Outcome, res.ReturnCode, clip(res.Stderr))
	}
	if took > 30*time.Second {
		e.t.Errorf("a 1 s timeout took %s to come back", took.Round(time.Millisecond))
	}
	return res
}

// timeoutPartialOutput: output printed before a timeout is returned.
func timeoutPartialOutput(e *env) {
	e.requireTool(port.ToolCodeExecution)
	id := e.session()
	res := e.runTimeout(id)
	if !strings.Contains(res.Stdout, "before") {
		e.t.Errorf("output printed before the timeout was lost: stdout %q; a backend must return what the program printed before it was stopped", clip(res.Stdout))
	}
}

// timeoutSessionSurvives: a session goes on answering after a timeout.
func timeoutSessionSurvives(e *env) {
	e.requireTool(port.ToolCodeExecution)
	id := e.session()
	e.writeText(id, "before-timeout.txt", "kept\n")
	e.runTimeout(id)
	e.expectStdout(id, "print('alive')", "alive\n")
	if got := e.readText(id, "before-timeout.txt"); got != "kept\n" {
		e.t.Errorf("the workspace did not survive the timeout: a file written before it reads %q", got)
	}
}

// timeoutCLoops: loops that run in C, never returning to the interpreter's
// bytecode loop, are stopped at the deadline too, and the session goes on.
func timeoutCLoops(e *env) {
	e.requireTool(port.ToolCodeExecution)
	id := e.session()
	for _, code := range []string{
		"import collections, itertools\ncollections.deque(itertools.count(), maxlen=0)",
		"sum(range(10**12))",
		"x = 10**10**8",
	} {
		start := time.Now()
		res := e.exec(id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code, Timeout: time.Second})
		took := time.Since(start)
		if res.Outcome != port.OutcomeTimedOut && (res.ReturnCode == 0 || res.Outcome == port.OutcomeCompleted) {
			e.t.Errorf("%q with a 1 s timeout: outcome %q, return code %d; it must be stopped", code, res.Outcome, res.ReturnCode)
		}
		if took > 30*time.Second {
			e.t.Errorf("%q: a 1 s timeout took %s to come back", code, took.Round(time.Millisecond))
		}
		e.expectStdout(id, "print('alive')", "alive\n")
	}
}

// forgeCode looks everywhere a program can reach for a way to tell the
// backend that its call is over (the driver's functions in frames and in
// the garbage collector's view, every file descriptor, markers on stdout),
// uses each, and then keeps the CPU busy.
const forgeCode = `import gc, os, sys
tried = 0
f = sys._getframe()
while f is not None:
    for v in list(f.f_locals.values()) + list(f.f_globals.values()):
        try:
            name = getattr(v, "__name__", "")
        except BaseException:  # a lazy module (six.moves) imports on access
            continue
        if callable(v) and name in ("handle", "done", "complete", "finish", "report"):
            tried += 1
    f = f.f_back
for o in gc.get_objects():
    try:
        code = getattr(o, "__code__", None)
        name = getattr(o, "__name__", "")
    except BaseException:
        continue
    if code is not None and getattr(code, "co_filename", "") == "<codeport>" and name in ("handle", "session_start", "flush"):
        try:
            o(83, b"") if name == "handle" else o()
            tried += 1
        except BaseException:
            pass
for fd in range(64):
    for rec in (b"R", b"\x00" * 5, b"\x02\x00\x00\x00\x00" * 8, b'{"status": "completed", "return_code": 0}\n'):
        try:
            os.write(fd, rec)
            tried += 1
        except OSError:
            pass
print("__CODEPORT_DONE__ 0", flush=True)
print(tried > 0, flush=True)
while True:
    pass
`

// forgedCompletion: nothing a program can reach ends its call early or
// chooses its outcome, and the session's next call is in step.
func forgedCompletion(e *env) {
	e.requireTool(port.ToolCodeExecution)
	id := e.session()
	const timeout = 2 * time.Second
	start := time.Now()
	res := e.exec(id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: forgeCode, Timeout: timeout})
	took := time.Since(start)
	if took < timeout*9/10 {
		e.t.Errorf("the call came back after %s, before its %s deadline: the program ended it (outcome %q, return code %d)", took.Round(time.Millisecond), timeout, res.Outcome, res.ReturnCode)
	}
	if res.Outcome != port.OutcomeTimedOut && (res.ReturnCode == 0 || res.Outcome == port.OutcomeCompleted) {
		e.t.Errorf("an endless loop after forged completions: outcome %q, return code %d", res.Outcome, res.ReturnCode)
	}
	for i := range 3 {
		want := fmt.Sprintf("in step %d\n", i)
		res := e.exec(id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: fmt.Sprintf("print('in step %d')", i)})
		if !sameOutput(res.Stdout, want) || res.ReturnCode != 0 {
			e.t.Errorf("call %d after the forgery: stdout %q, return code %d; want %q, 0", i, clip(res.Stdout), res.ReturnCode, want)
		}
	}
}

// sameOutput compares program output, forgiving a backend that trims the
// final newline (the reference backend does): that loses nothing a model
// reads.
func sameOutput(got, want string) bool {
	return got == want || got == strings.TrimSuffix(want, "\n")
}

// waitForFile waits until the workspace holds name (or done is closed),
// through GetFile, which does not compete for the session's one call. A
// backend without file operations gets a fixed pause instead.
func (e *env) waitForFile(id, name string, done <-chan struct{}) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		rc, _, err := e.p.GetFile(e.ctx, id, name)
		if err == nil {
			rc.Close()
			return
		}
		if !errors.Is(err, port.ErrFileNotFound) {
			break
		}
		select {
		case <-done:
			return
		case <-e.ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	select {
	case <-done:
	case <-time.After(500 * time.Millisecond):
	}
}

package conformance

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/codeport/codeport/port"
)

// The hostile checks: input a program or a client sends to break the
// backend rather than to use it. Each asserts that the call ends with a
// typed outcome by its deadline plus hostileGrace, that the session (or,
// when it was lost, a new one) and another session still work, and, when
// the target can measure it (Target.CPUTime), that the backend's CPU is
// released once the call has returned.

// hostileGrace is how long past its deadline a hostile call may take to
// come back: stopping it, tearing down what it built, and a busy machine.
// It is generous so that a verdict never depends on machine speed; a
// backend that ignores deadlines overshoots it by minutes.
const hostileGrace = 15 * time.Second

// hostileTimeout is the deadline hostile calls run under.
const hostileTimeout = 3 * time.Second

// heavyTimeout is asked for by a call whose work is seconds long on an
// idle machine, so that a loaded one does not time it out; a backend
// clamps it to its max-timeout.
const heavyTimeout = 5 * time.Minute

func hostileChecks() []Check {
	return []Check{
		{"hostile/python-recursion", check(hostilePythonRecursion)},
		{"hostile/bash-recursion", check(hostileBashRecursion)},
		{"hostile/busy-loop-stopped", check(hostileBusyLoop)},
		{"hostile/deep-tree", check(hostileDeepTree)},
		{"hostile/destroy-mid-call", check(hostileDestroyMidCall)},
		{"hostile/long-names", check(hostileLongNames)},
		{"hostile/editor-deep-path", check(hostileEditorDeepPath)},
	}
}

// hostile runs one hostile call under hostileTimeout and checks it came
// back in time with an outcome that is not a success.
func (e *env) hostile(id, what string, req port.ExecuteRequest) port.Result {
	req.Timeout = hostileTimeout
	start := time.Now()
	res := e.exec(id, req)
	took := time.Since(start)
	if took > hostileTimeout+hostileGrace {
		e.t.Errorf("%s: the call came back after %s, past its %s deadline and the %s grace", what, took.Round(time.Second), hostileTimeout, hostileGrace)
	}
	if res.Outcome == port.OutcomeCompleted || res.Outcome == "" {
		e.t.Errorf("%s: outcome %q (return code %d); want a typed failure", what, res.Outcome, res.ReturnCode)
	}
	e.t.Logf("%s: outcome %s, return code %d, %s", what, res.Outcome, res.ReturnCode, took.Round(time.Millisecond))
	return res
}

// survives checks that the backend still serves after a hostile call: the
// session itself (a lost one must say so and be gone) and a new one.
func (e *env) survives(id string, res port.Result) {
	if res.Outcome == port.OutcomeSessionLost {
		if _, err := e.p.Execute(e.ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "1"}); !errors.Is(err, port.ErrSessionNotFound) {
			e.t.Errorf("a session_lost session still answers: %v", err)
		}
	} else {
		e.alive(id)
	}
	e.alive(e.session())
	e.cpuReleased()
}

// cpuReleased checks, when the target can measure its CPU time, that
// nothing keeps running once the calls have returned: over a second of
// quiet the backend uses well under a core.
func (e *env) cpuReleased() {
	cpu := e.t.target.CPUTime
	if cpu == nil {
		return
	}
	const window = 1500 * time.Millisecond
	// A torn-down interpreter may take a moment to be collected.
	for attempt := range 3 {
		before := cpu()
		select {
		case <-e.ctx.Done():
			return
		case <-time.After(window):
		}
		used := cpu() - before
		if used < window/2 {
			e.t.Logf("CPU over %s of quiet: %s", window, used.Round(time.Millisecond))
			return
		}
		if attempt == 2 {
			e.t.Errorf("the backend used %s of CPU over %s after every call had returned: a stopped call is still running", used.Round(time.Millisecond), window)
		}
	}
}

// hostilePythonRecursion: recursion with the limit lifted exhausts the C
// stack or the memory, never the backend.
func hostilePythonRecursion(e *env) {
	e.requireTool(port.ToolCodeExecution)
	id := e.session()
	res := e.hostile(id, "unbounded recursion", port.ExecuteRequest{Tool: port.ToolCodeExecution,
		Code: "import sys\nsys.setrecursionlimit(10**8)\ndef f(n):\n    return f(n + 1)\nf(0)"})
	e.survives(id, res)
}

// hostileBashRecursion: a shell function that calls itself, directly and
// through nested evals, ends the command, never the backend (it once grew
// a goroutine stack past Go's limit and killed the server).
func hostileBashRecursion(e *env) {
	e.requireTool(port.ToolBashCodeExecution)
	id := e.session()
	for _, cmd := range []string{
		`f() { f; }; f`,
		`f() { eval 'eval "eval \"eval \\\"eval f\\\"\""'; }; f`,
	} {
		res := e.hostile(id, "recursion "+firstLine(cmd), port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: cmd})
		e.survives(id, res)
	}
}

// hostileBusyLoop: a loop that never yields is stopped at its deadline and
// its CPU released.
func hostileBusyLoop(e *env) {
	e.requireTool(port.ToolCodeExecution)
	id := e.session()
	res := e.hostile(id, "busy loop", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "while True:\n    pass"})
	if res.Outcome != port.OutcomeTimedOut {
		e.t.Errorf("busy loop: outcome %s, want timed_out", res.Outcome)
	}
	e.survives(id, res)
}

// deepTree builds, with Python, a tree depth directories deep with files
// along it, under top.
func deepTree(top string, depth, files int) string {
	return fmt.Sprintf("import os\np = %q\nfor i in range(%d):\n    p = os.path.join(p, 'd')\n    os.makedirs(p, exist_ok=True)\n    for j in range(%d):\n        open(os.path.join(p, 'f%%d' %% j), 'w').close()\nprint('built')", top, depth, files)
}

// hostileDeepTree: shell commands that walk a deep tree observe the
// deadline (rm -rf of a 300-deep tree once took 42 s under a 2 s
// deadline, and ls -R of a deeper one ran for minutes).
func hostileDeepTree(e *env) {
	e.requireTool(port.ToolCodeExecution)
	e.requireTool(port.ToolBashCodeExecution)
	id := e.session()
	res := e.exec(id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: deepTree("t", 300, 3), Timeout: 2 * time.Minute})
	if res.ReturnCode != 0 || !strings.Contains(res.Stdout, "built") {
		e.t.Fatalf("building the tree: return code %d, stderr %q", res.ReturnCode, clip(res.Stderr))
	}
	for _, cmd := range []string{
		"while true; do ls -R t > /dev/null; find t -type d > /dev/null; done",
		"while true; do cp -r t u && rm -rf u; done",
	} {
		res := e.hostile(id, firstLine(cmd), port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: cmd})
		e.survives(id, res)
	}
	// rm -rf of the whole tree itself must finish or stop by the deadline.
	req := port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "rm -rf t", Timeout: hostileTimeout}
	start := time.Now()
	res = e.exec(id, req)
	if took := time.Since(start); took > hostileTimeout+hostileGrace {
		e.t.Errorf("rm -rf of a 300-deep tree took %s under a %s deadline", took.Round(time.Second), hostileTimeout)
	}
	e.survives(id, res)
}

// hostileDestroyMidCall: destroying a session whose call walks a tree
// returns promptly, and the call ends.
func hostileDestroyMidCall(e *env) {
	e.requireTool(port.ToolCodeExecution)
	e.requireTool(port.ToolBashCodeExecution)
	s, err := e.p.CreateSession(e.ctx, port.CreateSessionRequest{})
	if err != nil {
		e.t.Fatalf("CreateSession: %v", err)
	}
	e.destroyLater(s.ID)
	res := e.exec(s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: deepTree("t", 200, 5), Timeout: 2 * time.Minute})
	if res.ReturnCode != 0 {
		e.t.Fatalf("building the tree: return code %d, stderr %q", res.ReturnCode, clip(res.Stderr))
	}
	done := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		_, _ = e.p.Execute(e.ctx, s.ID, port.ExecuteRequest{Tool: port.ToolBashCodeExecution,
			Command: "while true; do ls -R t | wc -l > /dev/null; done", Timeout: time.Minute})
		done <- time.Since(start)
	}()
	time.Sleep(time.Second) // let the call start walking
	start := time.Now()
	if err := e.p.DestroySession(e.ctx, s.ID); err != nil {
		e.t.Errorf("DestroySession during a call: %v", err)
	}
	if took := time.Since(start); took > hostileGrace {
		e.t.Errorf("DestroySession during a call took %s", took.Round(time.Second))
	}
	select {
	case took := <-done:
		e.t.Logf("the call ended %s after it started", took.Round(time.Millisecond))
	case <-time.After(hostileGrace):
		e.t.Errorf("the call was still running %s after its session was destroyed", hostileGrace)
	}
	e.alive(e.session())
	e.cpuReleased()
}

// hostileLongNames: a name component longer than any file system allows is
// a refused request (4xx on the wire), not a backend failure.
func hostileLongNames(e *env) {
	id := e.session()
	long := strings.Repeat("n", 300)
	for _, name := range []string{long, "dir/" + long + "/f.txt"} {
		if _, err := e.p.PutFile(e.ctx, id, name, strings.NewReader("x")); err == nil || !refusedRequest(err) {
			e.filesUnsupported(err)
			e.t.Errorf("PutFile with a 300-byte name: %s; want an invalid request", clip(fmt.Sprint(err)))
		}
		if _, _, err := e.p.GetFile(e.ctx, id, name); err == nil || !refusedRequest(err) && !errors.Is(err, port.ErrFileNotFound) {
			e.t.Errorf("GetFile with a 300-byte name: %s; want an invalid request or not found", clip(fmt.Sprint(err)))
		}
	}
	if _, err := e.p.ListFiles(e.ctx, id, long); err == nil || !refusedRequest(err) && !errors.Is(err, port.ErrFileNotFound) {
		e.t.Errorf("ListFiles with a 300-byte name: %s; want an invalid request or not found", clip(fmt.Sprint(err)))
	}
	e.alive(id)
}

// refusedRequest reports whether err is a refusal of the request itself.
func refusedRequest(err error) bool {
	return errors.Is(err, port.ErrInvalidRequest) || errors.Is(err, port.ErrPathEscapesWorkspace)
}

// hostileEditorDeepPath: the editor refuses (or creates) a file under a
// path thousands of directories deep without failing the backend.
func hostileEditorDeepPath(e *env) {
	e.requireTool(port.ToolTextEditorExecution)
	id := e.session()
	deep := strings.Repeat("a/", 2000) + "f.txt"
	text := "x\n"
	res, err := e.p.Execute(e.ctx, id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution,
		Editor: &port.EditorInput{Command: port.EditorCreate, Path: deep, FileText: &text}})
	switch {
	case err != nil && !refusedRequest(err):
		e.toolRefused(port.ToolTextEditorExecution, err)
		e.t.Errorf("editor create under a 2000-deep path: %v; want a result or an invalid request", err)
	case err == nil:
		e.t.Logf("editor create under a 2000-deep path: return code %d", res.ReturnCode)
	}
	e.alive(id)
}

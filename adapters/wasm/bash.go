package wasm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/codeport/codeport/adapters/wasm/internal/shell/wasmshell"
	"github.com/codeport/codeport/internal/bytesize"
	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

// newShell makes a session's bash tool: a shell guest over the same mounts
// as the session's Python (the same /workspace and /tmp, charged to the
// same quota), started at its first call. Its python command runs each
// command line in a fresh interpreter of its own (bashPython).
func (a *adapter) newShell(ctx context.Context, s *session) (*wasmshell.Shell, error) {
	shells, err := a.eng.shellEngine(ctx)
	if err != nil {
		return nil, err
	}
	return shells.Start(wasmshell.Options{
		Workspace:    s.ws.SysFS(),
		Tmp:          workspace.NewSysFS(s.tmpDir, s.quota),
		MaxFileBytes: a.cfg.settings.FileLimit,
		Quota:        func() (int64, int64) { return a.cfg.settings.WorkspaceLimit, s.quota.Used() },
		Python: func(ctx context.Context, call wasmshell.PythonCall) wasmshell.PythonResult {
			return a.bashPython(ctx, s, call)
		},
	})
}

// bashPython runs a python command line of a bash call as a program of its
// own: a fresh interpreter (restored from the image, as a session's is)
// over the session's mounts, discarded after it. It shares nothing with
// the session's code_execution interpreter: not its variables, not its
// standard streams, not its imported modules.
func (a *adapter) bashPython(ctx context.Context, s *session, call wasmshell.PythonCall) wasmshell.PythonResult {
	payload, err := json.Marshal(struct {
		Argv  []string `json:"argv"`
		Stdin string   `json:"stdin"`
		Cwd   string   `json:"cwd,omitempty"`
		Env   []string `json:"env,omitempty"`
	}{call.Argv, string(call.Stdin), call.Dir, call.Env})
	if err != nil {
		return wasmshell.PythonResult{Error: err.Error()}
	}
	timeout := a.cfg.settings.MaxTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	it, err := a.startInterpreter(ctx, s.mounts())
	if err != nil {
		return wasmshell.PythonResult{Error: fmt.Sprintf("could not start: %v", err)}
	}
	defer it.kill()
	// What it prints is bounded like any command's output that the shell
	// holds (a pipe, $(...)).
	r := it.run(ctx, requestPython, string(payload), timeout, int(a.cfg.settings.FileLimit), a.cfg.settings.Limits().MemoryBytes)
	return wasmshell.PythonResult{Stdout: []byte(r.stdout), Stderr: []byte(r.stderr), Code: r.returnCode}
}

// executeBash runs one bash_code_execution call in the session's shell,
// under the same timeout and output limits as code_execution.
func (a *adapter) executeBash(ctx context.Context, s *session, req port.ExecuteRequest, res *port.Result) error {
	if s.shell == nil {
		// Compiles the shell at the first bash call of the process (or
		// loads it from the compilation cache), outside the command's
		// timeout.
		sh, err := a.newShell(ctx, s)
		if err != nil {
			return fmt.Errorf("bash: %w", err)
		}
		s.shell = sh
	}
	timeout := req.Timeout
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var stdout, stderr streamCapture
	stdout.begin(int(a.cfg.settings.OutputLimit))
	stderr.begin(int(a.cfg.settings.OutputLimit))
	if out := req.OnOutput; out != nil {
		// stdout only: a crash's stderr (the Go runtime's report) is
		// trimmed after the fact, and so is not streamed as written.
		stdout.stream(func(b []byte) { out(port.Stdout, b) })
	}
	refusals, entryRefusals := s.quota.Refusals(), s.quota.EntryRefusals()

	start := time.Now()
	r, err := s.shell.Run(runCtx, req.Command, &stdout, &stderr)
	res.Duration = time.Since(start)
	if err != nil {
		return fmt.Errorf("%w: bash: %v", port.ErrRuntimeFailure, err)
	}
	var t1, t2 bool
	res.Stdout, t1 = stdout.end()
	res.Stderr, t2 = stderr.end()
	res.OutputTruncated = t1 || t2
	res.StateLost = r.Lost
	res.ReturnCode = r.Code
	if r.Lost {
		res.Stderr = wasmshell.TrimCrashReport(res.Stderr)
	}

	var notes []string
	if s.quota.Refusals() != refusals {
		// WASI has no ENOSPC a host can return (the command saw EIO), so
		// the cause is told here, as for Python.
		notes = append(notes, a.cfg.settings.quotaNote(s.quota.EntryRefusals() != entryRefusals))
	}
	const reset = "a fresh shell runs the next command (its variables, functions and directory are reset; files are kept)"
	switch {
	case r.Stop == wasmshell.StopDeadline && ctx.Err() == nil:
		res.Outcome, res.ReturnCode = port.OutcomeTimedOut, port.ReturnCodeTimedOut
		note := fmt.Sprintf("[codeport: the command timed out after %s and was stopped]", timeout)
		if r.Lost {
			note = fmt.Sprintf("[codeport: the command timed out after %s and did not stop; the shell was ended: %s]", timeout, reset)
		}
		notes = append(notes, note)
	case r.Stop != wasmshell.StopNone || ctx.Err() != nil:
		res.Outcome, res.ReturnCode = port.OutcomeCancelled, port.ReturnCodeCancelled
		notes = append(notes, "[codeport: the command was cancelled and stopped]")
	case r.OutOfMemory:
		res.Outcome, res.ReturnCode = port.OutcomeMemoryLimit, port.ReturnCodeMemoryLimit
		notes = append(notes, fmt.Sprintf("[codeport: the shell ran out of memory (the session's limit is %s) and was ended: %s]", bytesize.Format(a.cfg.settings.Limits().MemoryBytes), reset))
	case r.TooDeep:
		res.Outcome = port.OutcomeProgramError
		notes = append(notes, "[codeport: the script nested too deep (unbounded recursion) and the shell was ended: "+reset+"]")
	case r.Lost:
		res.Outcome = port.OutcomeProgramError
		notes = append(notes, "[codeport: the shell crashed: "+reset+"]")
	case r.Code == 0:
		res.Outcome = port.OutcomeCompleted
	default:
		res.Outcome = port.OutcomeProgramError
	}
	if len(notes) > 0 {
		res.Stderr = appendNote(res.Stderr, strings.Join(notes, "\n"))
	}
	return nil
}

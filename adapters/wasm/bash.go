package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	runtimemetrics "runtime/metrics"
	"sync"
	"time"

	"github.com/codeport/codeport/internal/bytesize"
	"github.com/codeport/codeport/adapters/wasm/internal/shell"
	"github.com/codeport/codeport/port"
)

// bashCall is what the python command of one bash call reports back to it.
type bashCall struct {
	stateLost   bool
	memoryLimit bool
}

// sessionShell is a session's bash tool: a shell interpreter whose commands
// are Go code confined to the workspace, and whose python runs in the
// session's own interpreter. No host process is ever started.
type sessionShell struct {
	sh *shell.Shell
	// mu serialises python commands: pipeline stages run concurrently, the
	// interpreter runs one request at a time.
	mu   sync.Mutex
	call *bashCall // the call in progress, under mu
}

func (a *adapter) newShell(s *session) *sessionShell {
	ss := &sessionShell{}
	ss.sh = shell.New(shell.Options{
		Workspace:    s.ws,
		MaxFileBytes: a.cfg.FileLimit,
		Python: func(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
			return a.bashPython(ctx, s, ss, argv, stdin, stdout, stderr)
		},
	})
	return ss
}

// bashPython runs a python command line of a bash call. Its standard input
// is read whole before the interpreter is taken, so that a pipeline of two
// python commands cannot deadlock on it.
func (a *adapter) bashPython(ctx context.Context, s *session, ss *sessionShell, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	data, err := io.ReadAll(io.LimitReader(stdin, a.cfg.FileLimit+1))
	if err != nil {
		return 1, err
	}
	if int64(len(data)) > a.cfg.FileLimit {
		fmt.Fprintf(stderr, "python: standard input is over the %d-byte limit\n", a.cfg.FileLimit)
		return 1, nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	// The command runs where the shell is, with what the shell exports.
	inv, _ := shell.InvocationFrom(ctx)
	payload, err := json.Marshal(struct {
		Argv  []string `json:"argv"`
		Stdin string   `json:"stdin"`
		Cwd   string   `json:"cwd,omitempty"`
		Env   []string `json:"env,omitempty"`
	}{argv, string(data), inv.Dir, inv.Env})
	if err != nil {
		return 1, err
	}
	timeout := a.cfg.MaxTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	r, err := a.runPython(ctx, s, requestPython, string(payload), timeout)
	if err != nil {
		return 1, err
	}
	if r.dead {
		ss.call.stateLost = true
	}
	if r.outcome == port.OutcomeMemoryLimit {
		ss.call.memoryLimit = true
	}
	_, _ = io.WriteString(stdout, r.stdout)
	_, _ = io.WriteString(stderr, r.stderr)
	return r.returnCode, nil
}

// executeBash runs one bash_code_execution call under the same timeout and
// output limits as code_execution.
func (a *adapter) executeBash(ctx context.Context, s *session, req port.ExecuteRequest, res *port.Result) error {
	timeout := req.Timeout
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The shell runs in the gateway's own heap (its Python does not): a
	// loop doubling a variable would otherwise grow it without bound.
	watchCtx, stopWatch := context.WithCancelCause(runCtx)
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		watchHeap(watchCtx, stopWatch, 4*a.cfg.Limits().MemoryBytes)
	}()
	defer func() { stopWatch(nil); <-watchDone }()
	runCtx = watchCtx
	var stdout, stderr streamCapture
	stdout.begin(int(a.cfg.OutputLimit))
	stderr.begin(int(a.cfg.OutputLimit))
	call := &bashCall{}
	s.shell.mu.Lock()
	s.shell.call = call
	s.shell.mu.Unlock()

	start := time.Now()
	code, err := s.shell.sh.Run(runCtx, req.Command, &stdout, &stderr)
	res.Duration = time.Since(start)

	s.shell.mu.Lock()
	s.shell.call = nil
	s.shell.mu.Unlock()
	var t1, t2 bool
	res.Stdout, t1 = stdout.end()
	res.Stderr, t2 = stderr.end()
	res.OutputTruncated = t1 || t2
	res.StateLost = call.stateLost
	res.ReturnCode = code

	var note string
	switch {
	case errors.Is(context.Cause(runCtx), errShellMemory):
		res.Outcome, res.ReturnCode = port.OutcomeMemoryLimit, port.ReturnCodeMemoryLimit
		note = fmt.Sprintf("[codeport: the shell's memory (variables, pipelines, nesting) grew past %s and the command was stopped]", bytesize.Format(4*a.cfg.Limits().MemoryBytes))
	case errors.Is(context.Cause(runCtx), context.DeadlineExceeded) && ctx.Err() == nil:
		res.Outcome, res.ReturnCode = port.OutcomeTimedOut, port.ReturnCodeTimedOut
		note = fmt.Sprintf("[codeport: the command timed out after %s and was stopped]", timeout)
	case ctx.Err() != nil:
		res.Outcome, res.ReturnCode = port.OutcomeCancelled, port.ReturnCodeCancelled
		note = "[codeport: the command was cancelled and stopped]"
	case err != nil:
		return fmt.Errorf("%w: bash: %v", port.ErrRuntimeFailure, err)
	case call.memoryLimit:
		res.Outcome = port.OutcomeMemoryLimit
	case code == 0:
		res.Outcome = port.OutcomeCompleted
	default:
		res.Outcome = port.OutcomeProgramError
	}
	if note != "" {
		res.Stderr = appendNote(res.Stderr, note)
	}
	return nil
}

// errShellMemory is the cause of a bash call stopped by watchHeap.
var errShellMemory = errors.New("shell memory budget exceeded")

// watchHeap stops a bash call (through stop) when the process's heap grows
// by more than budget during it. The shell interpreter checks its context
// before every statement, so it stops within one statement of that.
// The measure is the whole process's heap, a coarse bound: the budget is
// generous so that other sessions' work does not trip it. Goroutine stacks
// count too: they come from the same heap, and a script can grow them
// without any variable, by starting goroutines ("f() { f | f; }; f" starts
// one per pipeline) or by recursion (which the shell's own stack guard
// bounds per goroutine).
func watchHeap(ctx context.Context, stop context.CancelCauseFunc, budget int64) {
	sample := []runtimemetrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/stacks:bytes"},
	}
	heap := func() int64 {
		runtimemetrics.Read(sample)
		return int64(sample[0].Value.Uint64() + sample[1].Value.Uint64())
	}
	base := heap()
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if heap()-base > budget {
				stop(errShellMemory)
				return
			}
		}
	}
}

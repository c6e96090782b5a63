package wasm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/sys"

	"github.com/codeport/codeport/internal/bytesize"
	"github.com/codeport/codeport/port"
)

// cellResult is how one cell ended. dead reports that the interpreter is
// gone and must be replaced before the session's next call.
type cellResult struct {
	stdout, stderr string
	truncated      bool
	returnCode     int
	outcome        port.Outcome
	dead           bool
	duration       time.Duration
}

// run executes one cell, bounded by timeout and by ctx. A program stopped
// at its deadline or by ctx is stopped for real: run returns only after the
// instance's goroutine has ended, so the caller may release the session's
// capacity at once.
func (it *interpreter) run(ctx context.Context, kind byte, payload string, timeout time.Duration, outputLimit int, memoryLimit int64) cellResult {
	it.stdout.begin(outputLimit)
	it.stderr.begin(outputLimit)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	start := time.Now()
	it.ctl.send(kind, payload)

	var r cellResult
	var note string
	select {
	case c := <-it.ctl.done:
		r.returnCode = int(c.returnCode)
		switch c.status {
		case statusOK:
			r.outcome = port.OutcomeCompleted
		case statusExit:
			r.outcome = port.OutcomeCompleted
			if r.returnCode != 0 {
				r.outcome = port.OutcomeProgramError
			}
		case statusNoMemory:
			r.outcome, r.returnCode = port.OutcomeMemoryLimit, port.ReturnCodeMemoryLimit
			note = fmt.Sprintf("[codeport: the program ran out of memory (the session's limit is %s); the interpreter and its state are kept]", bytesize.Format(memoryLimit))
		default:
			r.outcome = port.OutcomeProgramError
		}
	case <-it.exited:
		r.dead = true
		var exit *sys.ExitError
		switch {
		case errors.As(it.exitErr, &exit):
			// os._exit(n), or the driver ended on its own.
			r.returnCode = int(exit.ExitCode())
			r.outcome = port.OutcomeCompleted
			if r.returnCode != 0 {
				r.outcome = port.OutcomeProgramError
			}
			note = fmt.Sprintf("[codeport: the interpreter exited with status %d; a fresh one will run the next call (variables and imports are lost, files are kept)]", r.returnCode)
		case it.memoryBytes() >= memoryLimit-(4<<20):
			r.outcome, r.returnCode = port.OutcomeMemoryLimit, port.ReturnCodeMemoryLimit
			note = fmt.Sprintf("[codeport: the program ran out of memory (the session's limit is %s) and the interpreter failed; a fresh one will run the next call (variables and imports are lost, files are kept)]", bytesize.Format(memoryLimit))
		default:
			r.outcome, r.returnCode = port.OutcomeProgramError, 1
			note = fmt.Sprintf("[codeport: the interpreter crashed (%s); a fresh one will run the next call (variables and imports are lost, files are kept)]", firstLine(it.exitErr))
		}
	case <-timer.C:
		it.kill()
		r.dead = true
		r.outcome, r.returnCode = port.OutcomeTimedOut, port.ReturnCodeTimedOut
		note = fmt.Sprintf("[codeport: execution timed out after %s and was stopped; a fresh interpreter will run the next call (variables and imports are lost, files are kept)]", timeout)
	case <-ctx.Done():
		it.kill()
		r.dead = true
		r.outcome, r.returnCode = port.OutcomeCancelled, port.ReturnCodeCancelled
		note = "[codeport: execution was cancelled and stopped; a fresh interpreter will run the next call (variables and imports are lost, files are kept)]"
	}
	r.duration = time.Since(start)
	var t1, t2 bool
	r.stdout, t1 = it.stdout.end()
	r.stderr, t2 = it.stderr.end()
	r.truncated = t1 || t2
	if note != "" {
		r.stderr = appendNote(r.stderr, note)
	}
	return r
}

func firstLine(err error) string {
	if err == nil {
		return "no error"
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// appendNote ends a program's stderr with one codeport line, on a line of
// its own whatever the program left unfinished.
func appendNote(stderr, note string) string {
	if stderr != "" && !strings.HasSuffix(stderr, "\n") {
		stderr += "\n"
	}
	return stderr + note + "\n"
}

package wasm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero/sys"

	"github.com/codeport/codeport/internal/bytesize"
	"github.com/codeport/codeport/port"
)

// cellResult is how one request ended. dead reports that the interpreter is
// gone and must be replaced before the session's next call.
type cellResult struct {
	stdout, stderr string
	truncated      bool
	returnCode     int
	outcome        port.Outcome
	dead           bool
	duration       time.Duration
}

// run executes one request, bounded by timeout and by ctx. The request is
// one call of the module's codeport_run export, and its completion is that
// call's return: nothing the program writes anywhere can end it early or
// choose its outcome. A call stopped at its deadline or by ctx is stopped
// for real (it traps at its next loop header, or its host sleep returns)
// and awaited before run returns, so the caller may release the session's
// capacity at once.
func (it *interpreter) run(ctx context.Context, kind byte, payload string, timeout time.Duration, outputLimit int, memoryLimit int64) cellResult {
	it.stdout.begin(outputLimit)
	it.stderr.begin(outputLimit)
	start := time.Now()

	var r cellResult
	var note string
	it.hostRefusedMemory() // a refusal before this call is not its own
	// outOf says which limit a program that ran out of memory met: the
	// session's, or (host) its process's.
	outOf := func(host bool) string {
		if host {
			return fmt.Sprintf("the process hosting the session is at its OS memory limit, below the session's own limit of %s", bytesize.Format(memoryLimit))
		}
		return fmt.Sprintf("the session's limit is %s", bytesize.Format(memoryLimit))
	}
	if err := it.write(ctx, payload); err != nil {
		if errors.Is(err, errNoMemory) {
			r.outcome, r.returnCode = port.OutcomeMemoryLimit, port.ReturnCodeMemoryLimit
			note = fmt.Sprintf("[codeport: the interpreter has no memory left to receive the code (%s); a fresh one will run the next call (variables and imports are lost, files are kept)]", outOf(it.hostRefusedMemory()))
		} else {
			r.outcome, r.returnCode = port.OutcomeProgramError, 1
			note = fmt.Sprintf("[codeport: the interpreter crashed (%s); a fresh one will run the next call (variables and imports are lost, files are kept)]", firstLine(err))
		}
		r.dead = true
		return it.finish(r, start, note)
	}

	// The call runs on this goroutine; a deadline or ctx ending stops it
	// from a callback (halt), and the call returns at its next loop
	// header. (A goroutine per call cost a hand-off each way, a third of
	// a short call's time.) The call's context is not the caller's: a
	// stop is the interrupt global, and the instance must never be
	// closed under a call.
	var reason atomic.Pointer[port.Outcome]
	stop := func(o port.Outcome, done chan struct{}) func() {
		return func() {
			defer close(done)
			if reason.CompareAndSwap(nil, &o) {
				it.halt()
			}
		}
	}
	timedOut, cancelled := make(chan struct{}), make(chan struct{})
	timer := time.AfterFunc(timeout, stop(port.OutcomeTimedOut, timedOut))
	unwatch := context.AfterFunc(ctx, stop(port.OutcomeCancelled, cancelled))
	res, err := it.runFn.Call(it.callContext(context.Background()), uint64(kind), uint64(len(payload)))
	// A stop that has begun is awaited: after this, nothing halts the
	// instance but its owner.
	if !timer.Stop() {
		<-timedOut
	}
	if !unwatch() {
		<-cancelled
	}
	host := it.hostRefusedMemory()
	var packed uint64
	if len(res) > 0 {
		packed = res[0]
	}
	var stopped port.Outcome
	if o := reason.Load(); o != nil {
		// Stopped, or about to be: the instance has its interrupt set (or
		// soon will) and is not used again.
		r.dead = true
		stopped = *o
		if err == nil {
			// It finished as it was stopped: its result stands.
			stopped = ""
			note = "[codeport: the call finished at its deadline; a fresh interpreter will run the next call (variables and imports are lost, files are kept)]"
		}
	}

	switch {
	case stopped == port.OutcomeTimedOut:
		r.dead = true
		r.outcome, r.returnCode = port.OutcomeTimedOut, port.ReturnCodeTimedOut
		note = fmt.Sprintf("[codeport: execution timed out after %s and was stopped; a fresh interpreter will run the next call (variables and imports are lost, files are kept)]", timeout)
	case stopped == port.OutcomeCancelled:
		r.dead = true
		r.outcome, r.returnCode = port.OutcomeCancelled, port.ReturnCodeCancelled
		note = "[codeport: execution was cancelled and stopped; a fresh interpreter will run the next call (variables and imports are lost, files are kept)]"
	case err != nil:
		r.dead = true
		var exit *sys.ExitError
		switch {
		case errors.As(err, &exit):
			// os._exit(n).
			r.returnCode = int(exit.ExitCode())
			r.outcome = port.OutcomeCompleted
			if r.returnCode != 0 {
				r.outcome = port.OutcomeProgramError
			}
			note = fmt.Sprintf("[codeport: the interpreter exited with status %d; a fresh one will run the next call (variables and imports are lost, files are kept)]", r.returnCode)
		case it.memoryBytes() >= memoryLimit-(4<<20) || host:
			r.outcome, r.returnCode = port.OutcomeMemoryLimit, port.ReturnCodeMemoryLimit
			note = fmt.Sprintf("[codeport: the program ran out of memory (%s) and the interpreter failed; a fresh one will run the next call (variables and imports are lost, files are kept)]", outOf(host))
		default:
			why := firstLine(err)
			if errors.Is(err, errUncaughtCxx) {
				why = "an uncaught C++ exception ended the call" // not a trap: say what it was
			}
			r.outcome, r.returnCode = port.OutcomeProgramError, 1
			note = fmt.Sprintf("[codeport: the interpreter crashed (%s); a fresh one will run the next call (variables and imports are lost, files are kept)]", why)
		}
	default:
		status, rc := int32(packed>>32), int32(uint32(packed))
		r.returnCode = int(rc)
		switch status {
		case statusOK:
			r.outcome = port.OutcomeCompleted
		case statusExit:
			r.outcome = port.OutcomeCompleted
			if r.returnCode != 0 {
				r.outcome = port.OutcomeProgramError
			}
		case statusNoMemory:
			r.outcome, r.returnCode = port.OutcomeMemoryLimit, port.ReturnCodeMemoryLimit
			if note == "" {
				note = fmt.Sprintf("[codeport: the program ran out of memory (%s); the interpreter and its state are kept]", outOf(host))
			}
		case statusException:
			r.outcome = port.OutcomeProgramError
		default: // statusInternal
			// The driver itself failed: the interpreter is not trusted
			// with another call.
			r.dead = true
			r.outcome, r.returnCode = port.OutcomeProgramError, 1
			note = "[codeport: the interpreter's driver failed; a fresh interpreter will run the next call (variables and imports are lost, files are kept)]"
		}
	}
	return it.finish(r, start, note)
}

// finish ends the call's capture and adds the codeport note, if any.
func (it *interpreter) finish(r cellResult, start time.Time, note string) cellResult {
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

package responses

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/internal/purpose"
	"github.com/codeport/codeport/port"
)

// OutcomeKind classifies how one code_interpreter call ended.
type OutcomeKind string

// The outcome kinds.
const (
	// Success: the program ran to its end with return code 0.
	Success OutcomeKind = "success"
	// ProgramError: the program raised or exited non-zero.
	ProgramError OutcomeKind = "program_error"
	// SyntaxError: a program error whose stderr ends with a SyntaxError,
	// IndentationError or TabError line, with no traceback, output or
	// file before it: the code did not compile. A SyntaxError the program
	// raised while it ran (eval, compile, an import) is a ProgramError.
	SyntaxError OutcomeKind = "syntax_error"
	// Timeout: the runtime stopped the program at the call's timeout.
	Timeout OutcomeKind = "timeout"
	// OuterTimeout: the gateway's own deadline (its scheduler's context)
	// passed before the call finished.
	OuterTimeout OutcomeKind = "outer_timeout"
	// Cancelled: the call was cancelled (client disconnect, context
	// cancelled).
	Cancelled OutcomeKind = "cancelled"
	// MemoryLimit: the program ran out of memory.
	MemoryLimit OutcomeKind = "memory_limit"
	// SessionLost: what hosted the session died during the call (a worker
	// process crashed or was killed); the session is gone with its files.
	SessionLost OutcomeKind = "session_lost"
	// OutputLimit: the program succeeded but its output went over the
	// output limit and was truncated.
	OutputLimit OutcomeKind = "output_limit"
	// CapacityUnavailable: no sandbox could be had now; RetryAfter says
	// when to try again. The code did not run.
	CapacityUnavailable OutcomeKind = "capacity_unavailable"
	// RuntimeFailure: the sandbox itself failed; the code did not run to
	// an outcome.
	RuntimeFailure OutcomeKind = "runtime_failure"
	// ContainerNotFound: the container the call was to run in is gone
	// (expired after its idle time, deleted, or ended by the backend;
	// containers.ErrContainerNotFound). The code did not run.
	ContainerNotFound OutcomeKind = "container_not_found"
	// ContainerBusy: another call was running in the container
	// (port.ErrSessionBusy). The code did not run.
	ContainerBusy OutcomeKind = "container_busy"
	// InvalidInput: the sandbox refused the call's input
	// (port.ErrInvalidRequest: code over the source limit, a NUL in it):
	// the model's to change, no failure of the sandbox's. The code did
	// not run.
	InvalidInput OutcomeKind = "invalid_input"
)

// Outcome is the one typed result of a call. FunctionOutput (what the model
// sees) and Plan.Item (what the client sees) are both projections of it.
// Stdout and Stderr hold whatever output the runtime supplied, for every
// kind, partial output included.
type Outcome struct {
	Kind       OutcomeKind
	Stdout     string
	Stderr     string
	ReturnCode int
	// Truncated: stdout or stderr went over the output limit.
	Truncated bool
	// StateLost: the interpreter was discarded. In phase one every call
	// starts with fresh state anyway (see RunCall) and the flag is
	// informative; in a container, the next call starts without the
	// variables of the earlier ones.
	StateLost bool
	// Err is the error that kept the call from running to an outcome
	// (OuterTimeout, Cancelled from a context, CapacityUnavailable,
	// RuntimeFailure); nil otherwise.
	Err error
	// RetryAfter is the capacity hint for CapacityUnavailable.
	RetryAfter time.Duration
	// Duration is the execution time the runtime reported (0 if unknown).
	Duration time.Duration
	// Files are the files the call produced (port.Result.Files). RunCall
	// fetches their bytes before it ends the call's session; OutcomeOf
	// knows their ids and names, and the bytes of the images the result
	// carried inline. RunInContainer fetches their bytes from the
	// container in the same way.
	Files []ProducedFile
	// ContainerFiles are the container's records of the files the call
	// produced (RunInContainer; nil otherwise), in the order of Files,
	// less any the container could not list (containers.WithMaxFiles).
	// ContainerFileCitations cites them.
	ContainerFiles []containers.File
}

// ProducedFile is a file a call produced.
type ProducedFile struct {
	// FileID is the port's id of the file (port.OutputFile.FileID); for a
	// call run in a container (RunInContainer), the container's id of it
	// ("cfile_..."), which the Containers API serves, or "" when the
	// container could not list it (containers.WithMaxFiles).
	FileID string
	// Filename is its path relative to the workspace root.
	Filename string
	// MimeType and Data are set when the bytes came inline with the result
	// or were fetched (RunCall, up to MaxFetchedBytes a call); Data is nil
	// when they were not.
	MimeType string
	Data     []byte
}

var syntaxLine = regexp.MustCompile(`^(SyntaxError|IndentationError|TabError)\b`)

// isSyntaxError reports whether res is a cell that did not compile: the
// last non-empty line of stderr is a SyntaxError, IndentationError or
// TabError line, and nothing ran before it: no output, no file, and no
// traceback, which a SyntaxError raised while the program ran has (a
// cell that does not compile has none). The note says "nothing ran",
// which must not be told of a program that printed or wrote files.
func isSyntaxError(res port.Result) bool {
	if res.Stdout != "" || len(res.Files) > 0 || strings.Contains(res.Stderr, "Traceback (most recent call last):") {
		return false
	}
	lines := strings.Split(strings.TrimRight(res.Stderr, "\n "), "\n")
	return syntaxLine.MatchString(strings.TrimSpace(lines[len(lines)-1]))
}

// OutcomeOf maps what port.CodeExecutionPort.Execute (or CreateSession)
// returned to an Outcome. Output in res is kept whatever the kind.
//
// A non-nil err wins over res.Outcome:
//   - port.ErrAtCapacity (a *port.CapacityError carries RetryAfter) →
//     CapacityUnavailable;
//   - context.DeadlineExceeded → OuterTimeout (return code 124 if none);
//   - context.Canceled → Cancelled (return code 130 if none);
//   - containers.ErrContainerNotFound → ContainerNotFound;
//   - port.ErrSessionBusy → ContainerBusy;
//   - port.ErrInvalidRequest → InvalidInput;
//   - anything else → RuntimeFailure.
//
// Otherwise res.Outcome decides: completed → Success; program_error →
// SyntaxError or ProgramError; timed_out → Timeout; cancelled → Cancelled;
// memory_limit → MemoryLimit; session_lost → SessionLost; empty → derived
// from the return code; an unknown outcome → RuntimeFailure. A truncated
// Success becomes OutputLimit; every other kind is more severe and keeps
// its kind, with Truncated still set.
func OutcomeOf(res port.Result, err error) Outcome {
	o := Outcome{
		Stdout:     res.Stdout,
		Stderr:     res.Stderr,
		ReturnCode: res.ReturnCode,
		Truncated:  res.OutputTruncated,
		StateLost:  res.StateLost,
		Duration:   res.Duration,
	}
	for _, f := range res.Files {
		pf := ProducedFile{FileID: f.FileID, Filename: f.Filename}
		if f.Data != nil {
			// An image the result carries inline: no need to fetch it.
			pf.MimeType, pf.Data = f.MediaType, f.Data
		}
		o.Files = append(o.Files, pf)
	}
	if err != nil {
		o.Err = err
		var ce *port.CapacityError
		switch {
		case errors.As(err, &ce):
			o.Kind, o.RetryAfter = CapacityUnavailable, ce.RetryAfter
		case errors.Is(err, port.ErrAtCapacity):
			o.Kind = CapacityUnavailable
		case errors.Is(err, context.DeadlineExceeded):
			o.Kind, o.StateLost = OuterTimeout, true
			if o.ReturnCode == 0 {
				o.ReturnCode = port.ReturnCodeTimedOut
			}
		case errors.Is(err, context.Canceled):
			o.Kind, o.StateLost = Cancelled, true
			if o.ReturnCode == 0 {
				o.ReturnCode = port.ReturnCodeCancelled
			}
		case errors.Is(err, containers.ErrContainerNotFound):
			o.Kind, o.StateLost = ContainerNotFound, true
		case errors.Is(err, port.ErrSessionBusy):
			o.Kind = ContainerBusy
		case errors.Is(err, port.ErrInvalidRequest):
			o.Kind = InvalidInput
		default:
			o.Kind = RuntimeFailure
		}
		return o
	}
	outcome := res.Outcome
	if outcome == "" {
		outcome = port.OutcomeCompleted
		if res.ReturnCode != 0 {
			outcome = port.OutcomeProgramError
		}
	}
	switch outcome {
	case port.OutcomeCompleted:
		o.Kind = Success
		if o.Truncated {
			o.Kind = OutputLimit
		}
	case port.OutcomeProgramError:
		o.Kind = ProgramError
		if isSyntaxError(res) {
			o.Kind = SyntaxError
		}
	case port.OutcomeTimedOut:
		o.Kind = Timeout
	case port.OutcomeCancelled:
		o.Kind = Cancelled
	case port.OutcomeMemoryLimit:
		o.Kind = MemoryLimit
	case port.OutcomeSessionLost:
		o.Kind, o.StateLost = SessionLost, true
	default:
		o.Kind = RuntimeFailure
		o.Err = fmt.Errorf("%w: unknown outcome %q", port.ErrRuntimeFailure, outcome)
	}
	return o
}

// Ran reports whether the code ran to an end of its own: Success,
// ProgramError, SyntaxError and OutputLimit. Those items are "completed";
// every other kind is "failed".
func (o Outcome) Ran() bool {
	switch o.Kind {
	case Success, ProgramError, SyntaxError, OutputLimit:
		return true
	}
	return false
}

// hasReturnCode reports whether the return code means something: the code
// was started. CapacityUnavailable, RuntimeFailure, ContainerNotFound,
// ContainerBusy and InvalidInput have none.
func (o Outcome) hasReturnCode() bool {
	switch o.Kind {
	case CapacityUnavailable, RuntimeFailure, ContainerNotFound, ContainerBusy, InvalidInput:
		return false
	}
	return true
}

// Explanation is the one-line explanation of a kind, "" for Success.
func (o Outcome) Explanation() string {
	after := ""
	if o.Duration > 0 {
		after = " after " + purpose.Duration(o.Duration)
	}
	switch o.Kind {
	case ProgramError:
		return "The program raised an error or exited with a non-zero status."
	case SyntaxError:
		return "The code did not compile (syntax error); nothing ran."
	case Timeout:
		return "The execution timed out" + after + " and was stopped; Python state was lost."
	case OuterTimeout:
		if !o.StateLost {
			return "The gateway's deadline for this call passed" + after + " before it started; the code did not run."
		}
		return "The gateway's deadline for this call passed" + after + " and the execution was stopped; Python state was lost."
	case Cancelled:
		if !o.StateLost {
			return "The execution was cancelled before it finished; Python state was kept."
		}
		return "The execution was cancelled before it finished; Python state was lost."
	case SessionLost:
		return "The sandbox process running this session died during the call; the session, its Python state and its files are gone."
	case MemoryLimit:
		return "The execution ran out of memory and was stopped; Python state was lost."
	case OutputLimit:
		return "The output went over the output limit and was truncated; print less."
	case CapacityUnavailable:
		if o.RetryAfter > 0 {
			return "No sandbox capacity now; retry after " + purpose.Duration(o.RetryAfter) + ". The code did not run."
		}
		return "No sandbox capacity now; retry later. The code did not run."
	case RuntimeFailure:
		msg := "unknown error"
		if o.Err != nil {
			msg = o.Err.Error()
		}
		return "The sandbox failed: " + msg + ". The code did not run to an end."
	case ContainerNotFound:
		return "The container is gone (it expired after its idle time, was deleted or was ended); the code did not run, and the variables and files of earlier calls are lost."
	case ContainerBusy:
		return "Another call is running in this container; the code did not run. Run it again once that call has finished."
	case InvalidInput:
		msg := "invalid input"
		if o.Err != nil {
			msg = o.Err.Error()
		}
		return "The sandbox refused the code (" + msg + "); it did not run. Change the code and run it again."
	}
	return ""
}

// FunctionOutput is the text the model sees as the function_call_output:
//
//	stdout:
//	<stdout>
//	stderr:
//	<stderr>
//	return_code: <n>
//	files: <name>, <name>
//	note: <explanation>
//
// A stream section appears only when the stream is not empty; "(no
// output)" replaces both when both are empty and the call succeeded;
// return_code is left out when the code was never started
// (CapacityUnavailable, RuntimeFailure, ContainerNotFound, ContainerBusy,
// InvalidInput); files lists the workspace paths
// of the files the call produced, when there are any, each quoted when it
// holds a comma, a quote, surrounding space or an unprintable character
// such as a newline (listedName); the note appears
// for every kind but Success. Partial output is always shown.
func (o Outcome) FunctionOutput() string {
	var b strings.Builder
	section := func(name, s string) {
		if s == "" {
			return
		}
		b.WriteString(name + ":\n" + s)
		if !strings.HasSuffix(s, "\n") {
			b.WriteString("\n")
		}
	}
	section("stdout", o.Stdout)
	section("stderr", o.Stderr)
	if o.Stdout == "" && o.Stderr == "" && o.Kind == Success {
		b.WriteString("(no output)\n")
	}
	if o.hasReturnCode() {
		b.WriteString("return_code: " + strconv.Itoa(o.ReturnCode) + "\n")
	}
	if len(o.Files) > 0 {
		names := make([]string, len(o.Files))
		for i, f := range o.Files {
			names[i] = listedName(f.Filename)
		}
		b.WriteString("files: " + strings.Join(names, ", ") + "\n")
	}
	if e := o.Explanation(); e != "" {
		b.WriteString("note: " + e + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// listedName renders a file name for the function output's files line:
// as is when plain, quoted (Go syntax) when it holds what could be read
// as the line's framing (a comma, a quote, leading or trailing space) or
// a character that is not printable (a newline would start a line of its
// own, such as a forged note).
func listedName(name string) string {
	odd := name == "" || strings.ContainsAny(name, ",\"") ||
		strings.TrimSpace(name) != name ||
		strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0
	if odd {
		return strconv.Quote(name)
	}
	return name
}

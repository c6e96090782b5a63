package port

import (
	"bytes"
	"context"
	"io"
	"time"
)

// CodeExecutionPort is the code-execution contract v1 as a Go interface.
//
// Implementations are safe for concurrent use. A session accepts one call at
// a time: a second concurrent Execute on the same session fails with
// ErrSessionBusy rather than queueing, so a caller never waits behind code it
// cannot see.
type CodeExecutionPort interface {
	// CreateSession leases a fresh session: empty interpreter state and an
	// empty workspace. Lifetime hints are clamped down to the backend's
	// ceilings, never up; the returned Session reports what is in force.
	CreateSession(ctx context.Context, req CreateSessionRequest) (Session, error)

	// Execute runs one tool call in a session. A program that fails, times
	// out or runs out of memory is still a successful call: the Result's
	// Outcome says what happened. The error is non-nil only when the call
	// could not run (unknown session, busy, invalid request, ...).
	Execute(ctx context.Context, sessionID string, req ExecuteRequest) (Result, error)

	// DestroySession releases a session and everything it holds. Destroying
	// an unknown or already destroyed session is not an error.
	DestroySession(ctx context.Context, sessionID string) error

	// ListFiles lists the entries of a directory of the session's workspace,
	// given relative to the workspace root ("" or "." for the root).
	ListFiles(ctx context.Context, sessionID, dir string) ([]FileInfo, error)

	// GetFile opens a file of the session's workspace for reading. The
	// caller closes the returned reader.
	GetFile(ctx context.Context, sessionID, path string) (io.ReadCloser, FileInfo, error)

	// PutFile writes a file into the session's workspace, creating parent
	// directories and replacing an existing file. A file larger than the
	// backend's cap is refused with ErrFileTooLarge, never truncated.
	PutFile(ctx context.Context, sessionID, path string, r io.Reader) (FileInfo, error)

	// GetOutputFile opens a file an Execute call produced, by the FileID
	// of one of its Result.Files: the file as it was when that call ended,
	// even if it has changed or gone since. The FileInfo's Path is the
	// workspace path it had then. An id the session never produced, or
	// whose copy the backend dropped to make room, is ErrFileNotFound. The
	// caller closes the returned reader.
	GetOutputFile(ctx context.Context, sessionID, fileID string) (io.ReadCloser, FileInfo, error)

	// Describe reports what this backend is and offers: the capability
	// description a gateway turns into the tool description a model sees.
	Describe(ctx context.Context) (Capabilities, error)

	// Close releases the backend's resources: every live session is
	// destroyed and every background task is stopped and awaited.
	Close() error
}

// ToolKind selects the operation of an Execute call.
type ToolKind string

// The tool kinds of contract v1.
const (
	ToolCodeExecution       ToolKind = "code_execution"
	ToolBashCodeExecution   ToolKind = "bash_code_execution"
	ToolTextEditorExecution ToolKind = "text_editor_code_execution"
)

// Known reports whether k is a tool kind of contract v1.
func (k ToolKind) Known() bool {
	switch k {
	case ToolCodeExecution, ToolBashCodeExecution, ToolTextEditorExecution:
		return true
	}
	return false
}

// ResultType is the contract's result block type for the tool kind.
func (k ToolKind) ResultType() string { return string(k) + "_tool_result" }

// CreateSessionRequest carries the optional lifetime hints of CreateSession.
// A zero duration means "no hint": the backend's default applies.
type CreateSessionRequest struct {
	IdleTimeout time.Duration
	MaxLifetime time.Duration
}

// Session is the handle CreateSession returns.
type Session struct {
	ID string
	// IdleTimeout and MaxLifetime are the bounds in force; zero means the
	// backend did not report one.
	IdleTimeout time.Duration
	MaxLifetime time.Duration
	CreatedAt   time.Time
	// LastActivityAt is when the session was last used.
	LastActivityAt time.Time
}

// ExecuteRequest is one tool call. Which input fields matter depends on Tool:
// Code for code_execution, Command for bash_code_execution, Editor for
// text_editor_code_execution.
type ExecuteRequest struct {
	Tool    ToolKind
	Code    string
	Command string
	Editor  *EditorInput
	// Timeout bounds execution. Zero means the backend's default; a value
	// above the backend's ceiling is clamped to it, not refused.
	Timeout time.Duration
	// ToolUseID correlates the call; the backend generates one when empty.
	ToolUseID string
	// DisplayValues says, for this code_execution call, whether the value
	// of the cell's last expression is displayed as in Jupyter (its repr
	// appended to stdout, rich representations returned as produced
	// files); nil leaves it to the backend (Capabilities.DisplaysValues).
	// The other tools ignore it.
	DisplayValues *bool
	// OnOutput, when set, receives the call's stdout and stderr while it
	// runs, in the order the program wrote them: each stream's chunks,
	// concatenated, are exactly that stream of the Result (truncation
	// notice and the backend's notes included). It is called from one
	// goroutine at a time, never after Execute returns, and must not
	// block: copy the chunk (it is not kept after the call returns) and
	// return, since the program may wait while it runs. A backend that
	// cannot stream (Capabilities.StreamsOutput false) delivers each
	// stream in one chunk as the call ends.
	OnOutput func(Stream, []byte) `json:"-"`
}

// Stream names an output stream of a call.
type Stream string

// The streams.
const (
	Stdout Stream = "stdout"
	Stderr Stream = "stderr"
)

// EditorCommand is a text_editor_code_execution command.
type EditorCommand string

// The editor commands of contract v1.
const (
	EditorView       EditorCommand = "view"
	EditorCreate     EditorCommand = "create"
	EditorStrReplace EditorCommand = "str_replace"
	EditorInsert     EditorCommand = "insert"
	EditorUndoEdit   EditorCommand = "undo_edit"
)

// EditorInput is the input of a text_editor_code_execution call. Pointer
// fields distinguish "absent" from "empty", which the editor's validation
// needs (an empty new_str is legal, a missing one is not).
type EditorInput struct {
	Command    EditorCommand
	Path       string
	FileText   *string
	OldStr     *string
	NewStr     *string
	InsertLine *int
	// ViewRange is nil, or a 1-based inclusive [start, end] where end -1
	// means the end of the file.
	ViewRange []int
}

// Outcome says how an executed program ended.
type Outcome string

// The outcomes of an Execute call that ran.
const (
	// OutcomeCompleted: the program ran to its end with return code 0.
	OutcomeCompleted Outcome = "completed"
	// OutcomeProgramError: the program raised, exited non-zero or was
	// refused by the tool (an editor error, a shell command that failed).
	OutcomeProgramError Outcome = "program_error"
	// OutcomeTimedOut: the program was stopped at its deadline.
	OutcomeTimedOut Outcome = "timed_out"
	// OutcomeCancelled: the caller's context ended before the program did.
	OutcomeCancelled Outcome = "cancelled"
	// OutcomeMemoryLimit: the program hit the session's memory limit.
	OutcomeMemoryLimit Outcome = "memory_limit"
	// OutcomeSessionLost: what hosted the session died during the call
	// (a worker process crashed, was killed, ran out of memory or hung
	// past its deadline). The session is gone with its state and files:
	// later calls on it fail with ErrSessionNotFound.
	OutcomeSessionLost Outcome = "session_lost"
)

// Result is what an Execute call that ran returns.
type Result struct {
	// ToolUseID is never empty: it is the request's ToolUseID, or one the
	// backend minted when the request brought none. A *Port mints it
	// (NewToolUseID) when its driver leaves it empty.
	ToolUseID string
	Tool      ToolKind
	Stdout    string
	Stderr    string
	// ReturnCode is the program's exit status: 0 on success, 1 for an
	// uncaught exception, n for SystemExit(n), 124 for a timeout, 137 for
	// the memory limit, 130 for a cancellation.
	ReturnCode int
	Outcome    Outcome
	// Duration is the time spent executing.
	Duration time.Duration
	// OutputTruncated is set when stdout or stderr went over the output
	// limit; the dropped bytes are gone and the stream ends with a notice.
	OutputTruncated bool
	// StateLost is set when the interpreter had to be discarded (timeout,
	// cancellation, memory exhaustion, os._exit): the session goes on with a
	// fresh interpreter and its workspace intact, and this call's Stderr
	// says so.
	StateLost bool
	// Files lists the files of the workspace the call created or changed
	// and that are there when it ends, in the order they were first
	// written: the contract's code_execution_output entries. Each FileID
	// opens that version with GetOutputFile. Empty when nothing was
	// produced, or when the backend does not report produced files
	// (Capabilities.OutputFiles).
	Files []OutputFile
}

// Return codes that the port gives to outcomes without an exit status of
// their own. They follow the shell's conventions (timeout(1), 128+signal).
const (
	ReturnCodeTimedOut    = 124
	ReturnCodeCancelled   = 130
	ReturnCodeMemoryLimit = 137
)

// OutputFile is a file an execution produced.
type OutputFile struct {
	// FileID names this version of the file for GetOutputFile.
	FileID string
	// Filename is the file's path relative to the workspace root, with
	// forward slashes.
	Filename string
	// MediaType and Size describe the file as the call left it, when the
	// backend reports them ("" and 0 when it does not).
	MediaType string
	Size      int64
	// Data is the whole file, inline, for an image a notebook would show
	// (InlineImageType: PNG, JPEG, GIF or WebP, by its bytes) while
	// the call's images stay within the backend's inline bound: a chart
	// comes back with the result that drew it. nil for every other file,
	// and for images over the bound (the result's stderr says which);
	// GetOutputFile opens any of them.
	Data []byte
}

// InlineImageType is the media type of an image a result may carry inline
// (OutputFile.Data), from the first bytes of its content: PNG, JPEG, GIF
// or WebP, the raster formats notebooks, MCP clients and model APIs
// display; "" for anything else. The signatures are those of the formats'
// specifications (and of the WHATWG MIME sniffing standard); 14 bytes
// decide.
func InlineImageType(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 14 && string(head[:4]) == "RIFF" && string(head[8:14]) == "WEBPVP":
		return "image/webp"
	}
	return ""
}

// FileInfo describes a workspace file.
type FileInfo struct {
	// Path is relative to the workspace root, with forward slashes.
	Path     string
	Size     int64
	IsDir    bool
	ModTime  time.Time
	MimeType string
}

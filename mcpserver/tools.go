package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codeport/codeport/internal/purpose"
	"github.com/codeport/codeport/internal/textclip"
	"github.com/codeport/codeport/port"
)

// The arguments of the tools. The json tags are the argument names; the
// jsonschema tags their descriptions in the input schemas.
type (
	runPythonArgs struct {
		Code           string  `json:"code" jsonschema:"the Python code to run"`
		SessionID      string  `json:"session_id,omitempty" jsonschema:"a session from create_session, whose variables, imports and files this call sees and keeps; without it the code runs in a fresh session that is discarded after the call"`
		TimeoutSeconds float64 `json:"timeout_seconds,omitempty" jsonschema:"stop the program after this many seconds (0 or absent: the default; more than the maximum: the maximum)"`
	}
	bashArgs struct {
		Command        string  `json:"command" jsonschema:"the shell command line to run"`
		SessionID      string  `json:"session_id,omitempty" jsonschema:"a session from create_session, whose files the command sees and keeps; without it the command runs in a fresh session that is discarded after the call"`
		TimeoutSeconds float64 `json:"timeout_seconds,omitempty" jsonschema:"stop the command after this many seconds (0 or absent: the default)"`
	}
	editorArgs struct {
		Command    string  `json:"command" jsonschema:"view, create, str_replace, insert or undo_edit"`
		Path       string  `json:"path" jsonschema:"the file (or, for view, directory), relative to the working directory"`
		FileText   *string `json:"file_text,omitempty" jsonschema:"create: the whole text of the file"`
		OldStr     *string `json:"old_str,omitempty" jsonschema:"str_replace: the text to replace, which must occur exactly once"`
		NewStr     *string `json:"new_str,omitempty" jsonschema:"str_replace: the replacement; insert: the text to insert"`
		InsertLine *int    `json:"insert_line,omitempty" jsonschema:"insert: the line after which new_str goes (0: at the start)"`
		ViewRange  []int   `json:"view_range,omitempty" jsonschema:"view: [first, last] line, 1-based and inclusive; last -1 means the end of the file"`
		SessionID  string  `json:"session_id,omitempty" jsonschema:"a session from create_session; without it the edit happens in a fresh, empty session that is discarded after the call"`
	}
	createSessionArgs struct {
		IdleTimeoutSeconds float64 `json:"idle_timeout_seconds,omitempty" jsonschema:"reclaim the session after it has been idle this many seconds (absent: the default; never more than the maximum)"`
		MaxLifetimeSeconds float64 `json:"max_lifetime_seconds,omitempty" jsonschema:"end the session this many seconds after it starts (absent: the maximum; never more)"`
	}
	destroySessionArgs struct {
		SessionID string `json:"session_id" jsonschema:"the session to end"`
	}
)

// The structured results.
type (
	// execOutput is the structured content of run_python, bash and
	// text_editor.
	execOutput struct {
		Stdout          string       `json:"stdout" jsonschema:"what the program wrote to standard output"`
		Stderr          string       `json:"stderr" jsonschema:"what the program wrote to standard error, and the sandbox's notes"`
		ReturnCode      int          `json:"return_code" jsonschema:"the exit status: 0 on success, 1 for an uncaught exception, 124 timed out, 137 out of memory, 130 cancelled"`
		Outcome         port.Outcome `json:"outcome" jsonschema:"completed, program_error, timed_out, cancelled, memory_limit or session_lost"`
		StateLost       bool         `json:"state_lost" jsonschema:"the interpreter was discarded (its variables are gone; the files stay)"`
		OutputTruncated bool         `json:"output_truncated" jsonschema:"stdout or stderr went over the output limit and was cut"`
		Files           []fileOutput `json:"files" jsonschema:"the files the call created or changed, in the order they were first written"`
	}
	fileOutput struct {
		FileID   string `json:"file_id" jsonschema:"names this version of the file"`
		Filename string `json:"filename" jsonschema:"the path relative to the working directory"`
		URI      string `json:"uri,omitempty" jsonschema:"the resource that reads this version (absent when the call had no session: it is gone)"`
		MimeType string `json:"mime_type,omitempty"`
		Size     int64  `json:"size" jsonschema:"bytes"`
		Embedded bool   `json:"embedded" jsonschema:"the file's contents are embedded in the result"`
	}
	sessionOutput struct {
		SessionID          string  `json:"session_id"`
		IdleTimeoutSeconds float64 `json:"idle_timeout_seconds,omitempty" jsonschema:"the session is reclaimed after being idle this long"`
		MaxLifetimeSeconds float64 `json:"max_lifetime_seconds,omitempty" jsonschema:"the session ends this long after it started"`
	}
	destroyOutput struct {
		SessionID string `json:"session_id"`
		Destroyed bool   `json:"destroyed"`
	}
)

// The input schemas are inferred from the argument types; the checks that
// give clearer messages in the handlers (empty code, negative seconds) are
// left out of them.

func runPythonSchema() *jsonschema.Schema { return schemaFor[runPythonArgs](nil) }

func bashSchema() *jsonschema.Schema { return schemaFor[bashArgs](nil) }

func editorSchema() *jsonschema.Schema {
	return schemaFor[editorArgs](func(p map[string]*jsonschema.Schema) {
		p["command"].Enum = []any{"view", "create", "str_replace", "insert", "undo_edit"}
		vr := p["view_range"]
		vr.Types, vr.Type = nil, "array"
		vr.MinItems, vr.MaxItems = jsonschema.Ptr(2), jsonschema.Ptr(2)
	})
}

func createSessionSchema() *jsonschema.Schema { return schemaFor[createSessionArgs](nil) }

func destroySessionSchema() *jsonschema.Schema { return schemaFor[destroySessionArgs](nil) }

func bashDescription(caps port.Capabilities) string {
	var b strings.Builder
	b.WriteString("Runs a shell command line (bash syntax) in the sandbox, over the same files as run_python: with a session_id, in that session's working directory. Returns stdout, stderr and the exit status.")
	if !caps.Network {
		b.WriteString(" There is no network access.")
	}
	if len(caps.ShellCommands) > 0 {
		b.WriteString(" Its commands are its builtins and " + strings.Join(caps.ShellCommands, ", ") + "; it starts no host processes.")
	}
	if offers(caps, port.ToolCodeExecution) {
		b.WriteString(" Its python3 runs each command line as a separate program, not in the session's interpreter.")
	}
	if d := caps.Limits.DefaultTimeout; d > 0 {
		b.WriteString(" Each call may run for " + purpose.Duration(d) + ".")
	}
	return b.String()
}

const editorDescription = "Views and edits text files in the sandbox's working directory (with a session_id, that session's). Commands: view (a file, numbered lines, optionally view_range; or a directory's entries), create (path, file_text: writes the whole file), str_replace (path, old_str, new_str: old_str must occur exactly once), insert (path, insert_line, new_str: after that line, 0 for the start), undo_edit (path: reverts the last edit of the file)."

func (h *handler) runPython(ctx context.Context, req *mcp.CallToolRequest, in runPythonArgs) (*mcp.CallToolResult, execOutput, error) {
	if strings.TrimSpace(in.Code) == "" {
		return nil, execOutput{}, errors.New("code is empty: give the Python code to run")
	}
	timeout, err := seconds("timeout_seconds", in.TimeoutSeconds)
	if err != nil {
		return nil, execOutput{}, err
	}
	return h.execute(ctx, req, in.SessionID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: in.Code, Timeout: timeout})
}

func (h *handler) bash(ctx context.Context, req *mcp.CallToolRequest, in bashArgs) (*mcp.CallToolResult, execOutput, error) {
	if strings.TrimSpace(in.Command) == "" {
		return nil, execOutput{}, errors.New("command is empty: give the shell command line to run")
	}
	timeout, err := seconds("timeout_seconds", in.TimeoutSeconds)
	if err != nil {
		return nil, execOutput{}, err
	}
	return h.execute(ctx, req, in.SessionID, port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: in.Command, Timeout: timeout})
}

func (h *handler) textEditor(ctx context.Context, req *mcp.CallToolRequest, in editorArgs) (*mcp.CallToolResult, execOutput, error) {
	cmd := port.EditorCommand(in.Command)
	switch cmd {
	case port.EditorView, port.EditorCreate, port.EditorStrReplace, port.EditorInsert, port.EditorUndoEdit:
	default:
		return nil, execOutput{}, fmt.Errorf("command %s is not an editor command: use view, create, str_replace, insert or undo_edit", quote(in.Command))
	}
	if in.Path == "" {
		return nil, execOutput{}, errors.New("path is empty: give the file to " + in.Command)
	}
	if in.ViewRange != nil && len(in.ViewRange) != 2 {
		return nil, execOutput{}, fmt.Errorf("view_range must be two line numbers [first, last], not %d", len(in.ViewRange))
	}
	if in.InsertLine != nil && *in.InsertLine < 0 {
		return nil, execOutput{}, errors.New("insert_line must not be negative")
	}
	ed := &port.EditorInput{
		Command:    cmd,
		Path:       in.Path,
		FileText:   in.FileText,
		OldStr:     in.OldStr,
		NewStr:     in.NewStr,
		InsertLine: in.InsertLine,
		ViewRange:  in.ViewRange,
	}
	return h.execute(ctx, req, in.SessionID, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: ed})
}

func (h *handler) createSession(ctx context.Context, _ *mcp.CallToolRequest, in createSessionArgs) (*mcp.CallToolResult, sessionOutput, error) {
	idle, err := seconds("idle_timeout_seconds", in.IdleTimeoutSeconds)
	if err != nil {
		return nil, sessionOutput{}, err
	}
	life, err := seconds("max_lifetime_seconds", in.MaxLifetimeSeconds)
	if err != nil {
		return nil, sessionOutput{}, err
	}
	s, err := h.p.CreateSession(ctx, port.CreateSessionRequest{IdleTimeout: idle, MaxLifetime: life})
	if err != nil {
		return nil, sessionOutput{}, portError(err, "")
	}
	out := sessionOutput{SessionID: s.ID, IdleTimeoutSeconds: s.IdleTimeout.Seconds(), MaxLifetimeSeconds: s.MaxLifetime.Seconds()}
	var b strings.Builder
	fmt.Fprintf(&b, "session_id: %s\nPass this session_id to every call that should share its state and files", s.ID)
	if s.IdleTimeout > 0 {
		fmt.Fprintf(&b, "; it is reclaimed after %s idle", purpose.Duration(s.IdleTimeout))
	}
	if s.MaxLifetime > 0 {
		fmt.Fprintf(&b, " and ends %s after it started", purpose.Duration(s.MaxLifetime))
	}
	b.WriteString(". Call destroy_session when done.")
	return textResult(b.String()), out, nil
}

func (h *handler) destroySession(ctx context.Context, _ *mcp.CallToolRequest, in destroySessionArgs) (*mcp.CallToolResult, destroyOutput, error) {
	if err := checkSessionID(in.SessionID); err != nil {
		return nil, destroyOutput{}, err
	}
	if in.SessionID == "" {
		return nil, destroyOutput{}, errors.New("session_id is empty: give the session to end")
	}
	if err := h.p.DestroySession(ctx, in.SessionID); err != nil {
		return nil, destroyOutput{}, portError(err, in.SessionID)
	}
	return textResult("Session " + in.SessionID + " is destroyed: its Python state and files are gone."),
		destroyOutput{SessionID: in.SessionID, Destroyed: true}, nil
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// maxSeconds is where a number of seconds stops being a time.Duration;
// larger values mean "as long as allowed" (the port clamps them).
const maxSeconds = float64(math.MaxInt64/int64(time.Second)) - 1

// seconds converts a non-negative number of seconds to a duration.
func seconds(name string, s float64) (time.Duration, error) {
	switch {
	case math.IsNaN(s) || s < 0:
		return 0, fmt.Errorf("%s must not be negative", name)
	case s > maxSeconds:
		return time.Duration(math.MaxInt64), nil
	}
	return time.Duration(s * float64(time.Second)), nil
}

// checkSessionID refuses what cannot be a session id, with a message a
// model can act on. An empty id is for the caller to judge.
func checkSessionID(id string) error {
	if id == "" {
		return nil
	}
	if len(id) > port.MaxIDBytes || !utf8.ValidString(id) || strings.ContainsFunc(id, func(r rune) bool {
		return unicode.IsControl(r) || unicode.IsSpace(r)
	}) {
		return fmt.Errorf("session_id %s is not a session id: use the session_id create_session returned, or leave it out to run in a fresh session", quote(id))
	}
	return nil
}

// portError is the tool error of a call the port refused, saying what to
// do next. The port's errors never hold code, output or file contents.
func portError(err error, sessionID string) error {
	var ce *port.CapacityError
	switch {
	case errors.Is(err, port.ErrSessionNotFound):
		return fmt.Errorf("no session %s: it was never created, was destroyed, or was reclaimed (idle too long, past its lifetime, or lost with its sandbox), and its state and files are gone; call create_session for a new one, or leave session_id out to run in a fresh session", quote(sessionID))
	case errors.Is(err, port.ErrSessionBusy):
		return fmt.Errorf("session %s is running another call; a session runs one call at a time: wait for that call to end", quote(sessionID))
	case errors.As(err, &ce) && ce.RateLimited:
		// The caller's own limit (its tenant's), not the sandbox's.
		return fmt.Errorf("%v (retry after %s)", err, purpose.Duration(max(ce.RetryAfter, time.Second)))
	case errors.As(err, &ce) && ce.RetryAfter > 0:
		return fmt.Errorf("no sandbox capacity now (%v); retry after %s", err, purpose.Duration(ce.RetryAfter))
	case errors.Is(err, port.ErrAtCapacity):
		return fmt.Errorf("no sandbox capacity now (%v); retry later", err)
	case errors.Is(err, port.ErrClosed):
		return errors.New("the sandbox is shutting down")
	}
	return err
}

// quote quotes a value a client sent, shortened.
func quote(s string) string {
	return fmt.Sprintf("%q", textclip.Clip(s, 64))
}

package messages

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

// ToolType20250825 is the type of Anthropic's 2025-08-25 code execution
// tool, the one whose calls are bash_code_execution and
// text_editor_code_execution (ToolDefinition20250825).
const ToolType20250825 = "code_execution_20250825"

// The names of the 2025-08-25 tool's two calls: the names of their
// server_tool_use blocks, of the tools a gateway offers a model for them
// (BashToolDefinition, TextEditorToolDefinition) and of the tool kinds
// contract v1 runs.
const (
	BashToolName       = string(port.ToolBashCodeExecution)
	TextEditorToolName = string(port.ToolTextEditorExecution)
)

// The error codes of the 2025-08-25 tool's error blocks. Both calls have
// the first four; output_file_too_large is bash_code_execution's only,
// file_not_found text_editor_code_execution's only.
const (
	errInvalidToolInput      = "invalid_tool_input"
	errUnavailable           = "unavailable"
	errTooManyRequests       = "too_many_requests"
	errExecutionTimeExceeded = "execution_time_exceeded"
	errOutputFileTooLarge    = "output_file_too_large"
	errFileNotFound          = "file_not_found"
)

// ToolDefinition20250825 is the 2025-08-25 code execution tool as a client
// declares it in a request's tools:
//
//	{"type":"code_execution_20250825","name":"code_execution"}
//
// It takes no description or schema: the tool's two calls are
// BashToolDefinition's and TextEditorToolDefinition's.
func ToolDefinition20250825() json.RawMessage {
	return mustMarshal(struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}{ToolType20250825, ToolName})
}

// property is one property of a tool's input schema.
type property struct {
	Type        string    `json:"type"`
	Description string    `json:"description,omitempty"`
	Enum        []string  `json:"enum,omitempty"`
	Items       *property `json:"items,omitempty"`
	MinItems    int       `json:"minItems,omitempty"`
	MaxItems    int       `json:"maxItems,omitempty"`
}

type customTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	InputSchema struct {
		Type       string              `json:"type"`
		Properties map[string]property `json:"properties"`
		Required   []string            `json:"required"`
	} `json:"input_schema"`
}

func newCustomTool(name, description string, props map[string]property, required ...string) json.RawMessage {
	t := customTool{Name: name, Description: description}
	t.InputSchema.Type = "object"
	t.InputSchema.Properties = props
	t.InputSchema.Required = required
	return mustMarshal(t)
}

// BashToolDefinition is the tool a gateway offers a model for the 2025-08-25
// tool's bash_code_execution calls, an ordinary tool with the input those
// calls have:
//
//	{"name":"bash_code_execution","description":...,
//	 "input_schema":{"type":"object","properties":{"command":{"type":"string",...}},"required":["command"]}}
//
// description is usually the bound adapter's purpose hint, which describes
// the shell when the backend has one (binding.PurposeHint).
func BashToolDefinition(description string) json.RawMessage {
	return newCustomTool(BashToolName, description, map[string]property{
		"command": {Type: "string", Description: "The shell command line to run."},
	}, "command")
}

// TextEditorToolDefinition is the tool a gateway offers a model for the
// 2025-08-25 tool's text_editor_code_execution calls: an ordinary tool
// whose input is {command, path, ...} with the commands the tool's result
// blocks describe, view, create and str_replace.
func TextEditorToolDefinition(description string) json.RawMessage {
	return newCustomTool(TextEditorToolName, description, map[string]property{
		"command":   {Type: "string", Enum: []string{string(port.EditorView), string(port.EditorCreate), string(port.EditorStrReplace)}},
		"path":      {Type: "string", Description: "The file (for view, also a directory), relative to the working directory."},
		"file_text": {Type: "string", Description: "create: the whole text of the new file."},
		"old_str":   {Type: "string", Description: "str_replace: the text to replace, which must occur exactly once."},
		"new_str":   {Type: "string", Description: "str_replace: the replacement."},
		"view_range": {Type: "array", Items: &property{Type: "integer"}, MinItems: 2, MaxItems: 2,
			Description: "view: [first, last] line, 1-based and inclusive; last -1 means the end of the file."},
	}, "command", "path")
}

// Call is one call of the 2025-08-25 tool: a bash_code_execution or
// text_editor_code_execution call, as the model asked for it. A gateway
// that offered BashToolDefinition and TextEditorToolDefinition makes one
// of each tool use the model returns, with a fresh server tool use id:
//
//	call := messages.Call{ID: messages.NewToolUseID(), Name: use.Name, Input: use.Input}
//	req, err := call.Request()
//	var res port.Result
//	if err == nil {
//		res, err = p.Execute(ctx, sessionID, req) // the conversation's session
//	}
//	content = append(content, call.ServerToolUse(), call.Result(res, err, fileIDs))
type Call struct {
	// ID is the server tool use id of the call's blocks
	// (NewToolUseID).
	ID string
	// Name is BashToolName or TextEditorToolName.
	Name string
	// Input is the call's input object: {"command": ...} for bash,
	// {"command", "path", ...} for the editor.
	Input json.RawMessage
}

// Request decodes the call's input into the request that runs it, with
// ToolUseID set to the call's ID and the backend's default timeout. Its
// errors are the call's invalid_tool_input: they wrap
// port.ErrInvalidRequest and say which field is at fault. A name other
// than the two is port.ErrUnsupportedTool: the model called a tool the
// gateway did not offer, which the gateway answers the model itself,
// with no blocks for the client (Result would report it as an unavailable
// bash_code_execution call).
//
// The editor's commands are view, create and str_replace; insert and
// undo_edit, which codeport's editor also has, are refused because the
// 2025-08-25 tool's result blocks have no shape for them.
func (c Call) Request() (port.ExecuteRequest, error) {
	if c.Name != BashToolName && c.Name != TextEditorToolName {
		return port.ExecuteRequest{}, fmt.Errorf("%w: %s is not a call of the %s tool", port.ErrUnsupportedTool, strconv.Quote(short(c.Name)), ToolType20250825)
	}
	req, err := contract.ExecRequestToPort(contract.ExecRequest{Tool: c.Name, Input: c.Input, ToolUseID: c.ID})
	if err != nil {
		return port.ExecuteRequest{}, err
	}
	if req.Editor != nil {
		switch req.Editor.Command {
		case port.EditorView, port.EditorCreate, port.EditorStrReplace:
		default:
			return port.ExecuteRequest{}, fmt.Errorf("%w: input.command must be view, create or str_replace", port.ErrInvalidRequest)
		}
	}
	return req, nil
}

// ServerToolUse is the call's server_tool_use block, with the input as
// the model gave it (compacted; {} when it is not a JSON object):
//
//	{"type":"server_tool_use","id":...,"name":"bash_code_execution","input":{"command":"ls"}}
func (c Call) ServerToolUse() json.RawMessage {
	input := json.RawMessage("{}")
	var buf bytes.Buffer
	if err := json.Compact(&buf, c.Input); err == nil && buf.Len() > 0 && buf.Bytes()[0] == '{' {
		input = buf.Bytes()
	}
	return mustMarshal(struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}{"server_tool_use", c.ID, c.Name, input})
}

// A FileIDFunc gives the id a client knows a produced file by. codeport
// has no file store: the gateway stores the file's bytes in its own (read
// them with port.CodeExecutionPort.GetOutputFile by f.FileID, in the
// call's session) and returns the id its store gave them, the one a
// client then downloads the file by. An empty id leaves the file out of
// the block. An error wrapping port.ErrFileTooLarge makes the call's
// result an output_file_too_large error; any other error, unavailable.
type FileIDFunc func(f port.OutputFile) (string, error)

// Result is the call's result block, from what Execute returned for its
// Request (res and err), or from Request's error (pass a zero res).
//
// A bash_code_execution call that ran gives
//
//	{"type":"bash_code_execution_tool_result","tool_use_id":...,
//	 "content":{"type":"bash_code_execution_result","stdout":...,"stderr":...,"return_code":...,
//	            "content":[{"type":"bash_code_execution_output","file_id":...}]}}
//
// whose values are those of contract v1's result_block for the call
// (contract.ResultFromPort); the produced files are listed by the ids
// fileIDs gives (nil: the port's own ids, port.OutputFile.FileID). A
// text_editor_code_execution call that ran gives, by its command,
//
//	view:        {"type":"text_editor_code_execution_view_result","file_type":"text","content":...,
//	              "start_line":...,"num_lines":...,"total_lines":...}
//	create:      {"type":"text_editor_code_execution_create_result","is_file_update":false}
//	str_replace: {"type":"text_editor_code_execution_str_replace_result",
//	              "old_start":...,"old_lines":...,"new_start":...,"new_lines":...,"lines":["-old","+new"]}
//
// inside {"type":"text_editor_code_execution_tool_result","tool_use_id":...,"content":...}.
// A view's content is the text the editor showed without its line-number
// column, and start_line, num_lines and total_lines come from those
// numbers (total_lines when the view reached the end of the file); output
// that is not numbered lines (a directory's listing) is the content as it
// is, without line numbers. is_file_update is always false: codeport's
// editor refuses to create a file that exists. A str_replace's lines are
// old_str's lines prefixed "-" and new_str's prefixed "+", as the call
// gave them, and old_start and new_start the line where the edit begins,
// which the editor reports (left out when its output does not say).
//
// Otherwise the block's content is an error,
//
//	{"type":"bash_code_execution_tool_result_error","error_code":...}
//	{"type":"text_editor_code_execution_tool_result_error","error_code":...,"error_message":...}
//
// whose code says why:
//
//   - invalid_tool_input: Request's error, or Execute's wrapping
//     port.ErrInvalidRequest, port.ErrPathEscapesWorkspace or
//     port.ErrIsDirectory (and for the editor port.ErrFileTooLarge, a
//     file_text over the backend's cap); an editor command that failed
//     (port.OutcomeProgramError) for any other reason than a missing file.
//   - file_not_found (editor): an editor command that failed because its
//     path does not exist (the editor's message ends "does not exist"), or
//     Execute's error wrapping port.ErrFileNotFound.
//   - execution_time_exceeded: port.OutcomeTimedOut, or Execute's error
//     wrapping context.DeadlineExceeded (the gateway's own deadline). A
//     timed-out command's partial output is not in the block.
//   - too_many_requests: Execute's error wrapping port.ErrAtCapacity
//     (port.ErrRateLimited included) or port.ErrSessionBusy.
//   - output_file_too_large (bash): fileIDs' error wrapping
//     port.ErrFileTooLarge.
//   - unavailable: every other error (runtime failure, session not found,
//     unreachable backend, context cancelled, an unsupported tool,
//     fileIDs' other errors), port.OutcomeCancelled,
//     port.OutcomeSessionLost and an unknown outcome, and the editor's
//     port.OutcomeMemoryLimit.
//
// A bash command that failed (port.OutcomeProgramError) or ran out of
// memory (port.OutcomeMemoryLimit, return code 137) ran: its result says
// so with its return code and stderr, as a shell's would. An editor error
// carries the editor's message (or Request's or Execute's error text) as
// error_message for invalid_tool_input and file_not_found, none for the
// other codes, whose errors may name the backend's internals.
func (c Call) Result(res port.Result, err error, fileIDs FileIDFunc) json.RawMessage {
	req, reqErr := c.Request()
	if err == nil {
		err = reqErr
	}
	if c.Name == TextEditorToolName {
		return editorResult(c.ID, req.Editor, res, err)
	}
	return bashResult(c.ID, res, err, fileIDs)
}

type toolResult struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   any    `json:"content"`
}

type bashRun struct {
	Type       string       `json:"type"`
	Stdout     string       `json:"stdout"`
	Stderr     string       `json:"stderr"`
	ReturnCode int          `json:"return_code"`
	Content    []bashOutput `json:"content"`
}

type bashOutput struct {
	Type   string `json:"type"`
	FileID string `json:"file_id"`
}

type bashError struct {
	Type      string `json:"type"`
	ErrorCode string `json:"error_code"`
}

const bashResultType = "bash_code_execution_result"

func bashResult(id string, res port.Result, err error, fileIDs FileIDFunc) json.RawMessage {
	block := toolResult{Type: port.ToolBashCodeExecution.ResultType(), ToolUseID: id}
	code := ""
	if err != nil {
		code = errorCode(port.ToolBashCodeExecution, err)
	} else {
		switch outcomeOf(res) {
		case port.OutcomeCompleted, port.OutcomeProgramError, port.OutcomeMemoryLimit:
		case port.OutcomeTimedOut:
			code = errExecutionTimeExceeded
		default:
			code = errUnavailable
		}
	}
	var files []bashOutput
	if code == "" {
		files, err = outputFiles(res.Files, fileIDs)
		if err != nil {
			code = errUnavailable
			if errors.Is(err, port.ErrFileTooLarge) {
				code = errOutputFileTooLarge
			}
		}
	}
	if code != "" {
		block.Content = bashError{Type: "bash_code_execution_tool_result_error", ErrorCode: code}
		return mustMarshal(block)
	}
	// Contract v1's result block for the call, in the 2025-08-25 shape.
	res.ToolUseID, res.Tool = id, port.ToolBashCodeExecution
	rb := contract.ResultFromPort(res).ResultBlock
	block.Type, block.ToolUseID = rb.Type, rb.ToolUseID
	block.Content = bashRun{
		Type:       bashResultType,
		Stdout:     rb.Content.Stdout,
		Stderr:     rb.Content.Stderr,
		ReturnCode: rb.Content.ReturnCode,
		Content:    files,
	}
	return mustMarshal(block)
}

// outputFiles lists the produced files by the ids fileIDs gives.
func outputFiles(files []port.OutputFile, fileIDs FileIDFunc) ([]bashOutput, error) {
	out := make([]bashOutput, 0, len(files))
	for _, f := range files {
		id := f.FileID
		if fileIDs != nil {
			var err error
			if id, err = fileIDs(f); err != nil {
				return nil, err
			}
		}
		if id != "" {
			out = append(out, bashOutput{Type: "bash_code_execution_output", FileID: id})
		}
	}
	return out, nil
}

type editorError struct {
	Type         string `json:"type"`
	ErrorCode    string `json:"error_code"`
	ErrorMessage string `json:"error_message,omitempty"`
}

type viewResult struct {
	Type       string `json:"type"`
	FileType   string `json:"file_type"`
	Content    string `json:"content"`
	StartLine  *int   `json:"start_line,omitempty"`
	NumLines   *int   `json:"num_lines,omitempty"`
	TotalLines *int   `json:"total_lines,omitempty"`
}

type createResult struct {
	Type         string `json:"type"`
	IsFileUpdate bool   `json:"is_file_update"`
}

type strReplaceResult struct {
	Type     string   `json:"type"`
	OldStart *int     `json:"old_start,omitempty"`
	OldLines int      `json:"old_lines"`
	NewStart *int     `json:"new_start,omitempty"`
	NewLines int      `json:"new_lines"`
	Lines    []string `json:"lines"`
}

func editorResult(id string, in *port.EditorInput, res port.Result, err error) json.RawMessage {
	block := toolResult{Type: port.ToolTextEditorExecution.ResultType(), ToolUseID: id}
	fail := func(code, message string) json.RawMessage {
		if code != errInvalidToolInput && code != errFileNotFound {
			message = ""
		}
		block.Content = editorError{Type: "text_editor_code_execution_tool_result_error", ErrorCode: code, ErrorMessage: message}
		return mustMarshal(block)
	}
	switch {
	case err != nil:
		return fail(errorCode(port.ToolTextEditorExecution, err), err.Error())
	case in == nil: // not from Request; cannot happen
		return fail(errInvalidToolInput, "")
	}
	switch outcomeOf(res) {
	case port.OutcomeCompleted:
	case port.OutcomeProgramError:
		msg := editorMessage(res)
		if strings.HasSuffix(msg, " does not exist") {
			return fail(errFileNotFound, msg)
		}
		return fail(errInvalidToolInput, msg)
	case port.OutcomeTimedOut:
		return fail(errExecutionTimeExceeded, "")
	default:
		return fail(errUnavailable, "")
	}
	switch in.Command {
	case port.EditorView:
		block.Content = viewOf(res.Stdout, in.ViewRange)
	case port.EditorCreate:
		block.Content = createResult{Type: "text_editor_code_execution_create_result"}
	default: // port.EditorStrReplace; Request allows nothing else
		block.Content = strReplaceOf(res.Stdout, in)
	}
	return mustMarshal(block)
}

// editorMessage is a failed editor command's message: its stderr (stdout
// when that is empty) without the editor's "Error: " prefix.
func editorMessage(res port.Result) string {
	msg := strings.TrimSpace(res.Stderr)
	if msg == "" {
		msg = strings.TrimSpace(res.Stdout)
	}
	return strings.TrimPrefix(msg, "Error: ")
}

// numberedLine is a line of the editor's view of a file: its number,
// right-aligned, a tab, then the line.
var numberedLine = regexp.MustCompile(`^ *([0-9]+)\t`)

// viewOf reads the editor's view of a file, whose lines are numbered; any
// other output (a directory's listing) is the content as it is.
func viewOf(out string, viewRange []int) viewResult {
	v := viewResult{Type: "text_editor_code_execution_view_result", FileType: "text", Content: out}
	if out == "" {
		// An empty file: no lines, and it has been seen whole.
		zero := 0
		v.NumLines = &zero
		if viewRange == nil {
			v.TotalLines = &zero
		}
		return v
	}
	if !strings.HasSuffix(out, "\n") {
		return v
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var b strings.Builder
	start := 0
	for i, l := range lines {
		m := numberedLine.FindStringSubmatch(l)
		if m == nil {
			return v
		}
		n, err := strconv.Atoi(m[1])
		switch {
		case err != nil, i == 0 && n < 1, i > 0 && n != start+i:
			return v
		case i == 0:
			start = n
		}
		b.WriteString(l[len(m[0]):])
		b.WriteByte('\n')
	}
	count := len(lines)
	v.Content, v.StartLine, v.NumLines = b.String(), &start, &count
	if (viewRange == nil && start == 1) || (len(viewRange) == 2 && viewRange[1] == -1) {
		total := start + count - 1
		v.TotalLines = &total
	}
	return v
}

// editedAt finds the line where the editor says a str_replace began.
var editedAt = regexp.MustCompile(`(?:at line|now lines) ([0-9]+)`)

func strReplaceOf(out string, in *port.EditorInput) strReplaceResult {
	r := strReplaceResult{Type: "text_editor_code_execution_str_replace_result", Lines: []string{}}
	var oldStr, newStr string
	if in.OldStr != nil {
		oldStr = *in.OldStr
	}
	if in.NewStr != nil {
		newStr = *in.NewStr
	}
	for _, l := range splitLines(oldStr) {
		r.Lines = append(r.Lines, "-"+l)
		r.OldLines++
	}
	for _, l := range splitLines(newStr) {
		r.Lines = append(r.Lines, "+"+l)
		r.NewLines++
	}
	// The last mention: the file's path comes first in the message.
	if ms := editedAt.FindAllStringSubmatch(out, -1); len(ms) > 0 {
		if n, err := strconv.Atoi(ms[len(ms)-1][1]); err == nil && n > 0 {
			r.OldStart, r.NewStart = &n, &n
		}
	}
	return r
}

// splitLines splits s into its lines, without their terminators ("\n" or
// "\r\n"); a final terminator starts no line, and "" has none.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// outcomeOf is res's outcome, or the one its return code implies (as
// contract.ResultFromPort derives it).
func outcomeOf(res port.Result) port.Outcome {
	switch {
	case res.Outcome != "":
		return res.Outcome
	case res.ReturnCode == 0:
		return port.OutcomeCompleted
	}
	return port.OutcomeProgramError
}

// errorCode is the error code of a call of tool that did not run to an
// outcome because of err (see Call.Result).
func errorCode(tool port.ToolKind, err error) string {
	editor := tool == port.ToolTextEditorExecution
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return errExecutionTimeExceeded
	case errors.Is(err, port.ErrAtCapacity), errors.Is(err, port.ErrSessionBusy):
		return errTooManyRequests
	case errors.Is(err, port.ErrInvalidRequest), errors.Is(err, port.ErrPathEscapesWorkspace), errors.Is(err, port.ErrIsDirectory):
		return errInvalidToolInput
	case editor && errors.Is(err, port.ErrFileNotFound):
		return errFileNotFound
	case editor && errors.Is(err, port.ErrFileTooLarge):
		return errInvalidToolInput
	case errors.Is(err, port.ErrFileTooLarge):
		return errOutputFileTooLarge
	}
	return errUnavailable
}

// short bounds a model-given name for an error message.
func short(s string) string {
	const limit = 64
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}

package messages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/port/porttest"
)

func TestToolDefinition20250825(t *testing.T) {
	if got, want := string(ToolDefinition20250825()), `{"type":"code_execution_20250825","name":"code_execution"}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestBashAndEditorToolDefinitions(t *testing.T) {
	bash := `{"name":"bash_code_execution","description":"Runs \"sh\".","input_schema":{"type":"object","properties":{"command":{"type":"string","description":"The shell command line to run."}},"required":["command"]}}`
	if got := string(BashToolDefinition(`Runs "sh".`)); got != bash {
		t.Errorf("bash\n got %s\nwant %s", got, bash)
	}
	var editor struct {
		Name        string `json:"name"`
		InputSchema struct {
			Type       string `json:"type"`
			Properties map[string]struct {
				Type     string                 `json:"type"`
				Enum     []string               `json:"enum"`
				Items    *struct{ Type string } `json:"items"`
				MinItems int                    `json:"minItems"`
				MaxItems int                    `json:"maxItems"`
			} `json:"properties"`
			Required []string `json:"required"`
		} `json:"input_schema"`
	}
	if err := json.Unmarshal(TextEditorToolDefinition("Edits files."), &editor); err != nil {
		t.Fatal(err)
	}
	s := editor.InputSchema
	var names []string
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	if editor.Name != "text_editor_code_execution" || s.Type != "object" || !slices.Equal(s.Required, []string{"command", "path"}) ||
		!slices.Equal(names, []string{"command", "file_text", "new_str", "old_str", "path", "view_range"}) ||
		!slices.Equal(s.Properties["command"].Enum, []string{"view", "create", "str_replace"}) ||
		s.Properties["view_range"].Items == nil || s.Properties["view_range"].Items.Type != "integer" ||
		s.Properties["view_range"].MinItems != 2 || s.Properties["view_range"].MaxItems != 2 {
		t.Errorf("editor tool: %s", TextEditorToolDefinition("Edits files."))
	}
}

func TestCallRequest(t *testing.T) {
	text := func(s string) *string { return &s }
	cases := []struct {
		name  string
		call  Call
		want  port.ExecuteRequest
		isErr error
	}{
		{"bash", Call{"srvtoolu_1", "bash_code_execution", json.RawMessage(`{"command":"ls -l"}`)},
			port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "ls -l", ToolUseID: "srvtoolu_1"}, nil},
		{"view", Call{"srvtoolu_2", "text_editor_code_execution", json.RawMessage(`{"command":"view","path":"a.py","view_range":[2,-1]}`)},
			port.ExecuteRequest{Tool: port.ToolTextEditorExecution, ToolUseID: "srvtoolu_2", Editor: &port.EditorInput{Command: port.EditorView, Path: "a.py", ViewRange: []int{2, -1}}}, nil},
		{"str_replace", Call{"srvtoolu_3", "text_editor_code_execution", json.RawMessage(`{"command":"str_replace","path":"a.py","old_str":"x","new_str":""}`)},
			port.ExecuteRequest{Tool: port.ToolTextEditorExecution, ToolUseID: "srvtoolu_3", Editor: &port.EditorInput{Command: port.EditorStrReplace, Path: "a.py", OldStr: text("x"), NewStr: text("")}}, nil},
		{"create", Call{"srvtoolu_4", "text_editor_code_execution", json.RawMessage(`{"command":"create","path":"b.txt","file_text":"hi\n"}`)},
			port.ExecuteRequest{Tool: port.ToolTextEditorExecution, ToolUseID: "srvtoolu_4", Editor: &port.EditorInput{Command: port.EditorCreate, Path: "b.txt", FileText: text("hi\n")}}, nil},
		{"insert refused", Call{"srvtoolu_5", "text_editor_code_execution", json.RawMessage(`{"command":"insert","path":"a.py","insert_line":0,"new_str":"x"}`)}, port.ExecuteRequest{}, port.ErrInvalidRequest},
		{"undo_edit refused", Call{"srvtoolu_6", "text_editor_code_execution", json.RawMessage(`{"command":"undo_edit","path":"a.py"}`)}, port.ExecuteRequest{}, port.ErrInvalidRequest},
		{"no command", Call{"srvtoolu_7", "bash_code_execution", json.RawMessage(`{}`)}, port.ExecuteRequest{}, port.ErrInvalidRequest},
		{"not an object", Call{"srvtoolu_8", "bash_code_execution", json.RawMessage(`["ls"]`)}, port.ExecuteRequest{}, port.ErrInvalidRequest},
		{"duplicate key", Call{"srvtoolu_9", "bash_code_execution", json.RawMessage(`{"command":"ls","command":"rm -r x"}`)}, port.ExecuteRequest{}, port.ErrInvalidRequest},
		{"another tool", Call{"srvtoolu_10", "code_execution", json.RawMessage(`{"code":"1"}`)}, port.ExecuteRequest{}, port.ErrUnsupportedTool},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.call.Request()
			if c.isErr != nil {
				if !errors.Is(err, c.isErr) {
					t.Fatalf("error %v, want one wrapping %v", err, c.isErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v %+v\nwant %+v %+v", got, got.Editor, c.want, c.want.Editor)
			}
		})
	}
}

func TestServerToolUse(t *testing.T) {
	for _, c := range []struct{ input, want string }{
		{`{ "command" : "echo hi" }`, `{"command":"echo hi"}`},
		{`{"command":"view","path":"a.py","view_range":[1,2]}`, `{"command":"view","path":"a.py","view_range":[1,2]}`},
		{`["ls"]`, `{}`},
		{`{"command":`, `{}`},
		{``, `{}`},
	} {
		got := string(Call{"srvtoolu_1", "bash_code_execution", json.RawMessage(c.input)}.ServerToolUse())
		want := `{"type":"server_tool_use","id":"srvtoolu_1","name":"bash_code_execution","input":` + c.want + `}`
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.input, got, want)
		}
	}
}

// bashCall is the call the bash results below answer.
var bashCall = Call{"srvtoolu_b", "bash_code_execution", json.RawMessage(`{"command":"make"}`)}

func bashBlock(content string) string {
	return `{"type":"bash_code_execution_tool_result","tool_use_id":"srvtoolu_b","content":` + content + `}`
}

func bashFailure(code string) string {
	return bashBlock(`{"type":"bash_code_execution_tool_result_error","error_code":"` + code + `"}`)
}

func TestBashResult(t *testing.T) {
	files := []port.OutputFile{{FileID: "out_1", Filename: "a.csv"}, {FileID: "out_2", Filename: "tmp/b.png", MediaType: "image/png"}}
	stored := func(f port.OutputFile) (string, error) {
		return "file_" + strings.ReplaceAll(f.Filename, "/", "_"), nil
	}
	cases := []struct {
		name    string
		call    Call
		res     port.Result
		err     error
		fileIDs FileIDFunc
		want    string
	}{
		{"success", bashCall, port.Result{Stdout: "ok\n", Outcome: port.OutcomeCompleted, Duration: time.Second}, nil, nil,
			bashBlock(`{"type":"bash_code_execution_result","stdout":"ok\n","stderr":"","return_code":0,"content":[]}`)},
		{"files by the port's ids", bashCall, port.Result{Outcome: port.OutcomeCompleted, Files: files}, nil, nil,
			bashBlock(`{"type":"bash_code_execution_result","stdout":"","stderr":"","return_code":0,"content":[{"type":"bash_code_execution_output","file_id":"out_1"},{"type":"bash_code_execution_output","file_id":"out_2"}]}`)},
		{"files by the gateway's ids", bashCall, port.Result{Outcome: port.OutcomeCompleted, Files: files}, nil, stored,
			bashBlock(`{"type":"bash_code_execution_result","stdout":"","stderr":"","return_code":0,"content":[{"type":"bash_code_execution_output","file_id":"file_a.csv"},{"type":"bash_code_execution_output","file_id":"file_tmp_b.png"}]}`)},
		{"a file left out", bashCall, port.Result{Outcome: port.OutcomeCompleted, Files: files}, nil,
			func(f port.OutputFile) (string, error) {
				if strings.HasPrefix(f.Filename, "tmp/") {
					return "", nil
				}
				return "file_1", nil
			},
			bashBlock(`{"type":"bash_code_execution_result","stdout":"","stderr":"","return_code":0,"content":[{"type":"bash_code_execution_output","file_id":"file_1"}]}`)},
		{"program error", bashCall, port.Result{Stdout: "cc a.c\n", Stderr: "make: *** [all] Error 1\n", ReturnCode: 2, Outcome: port.OutcomeProgramError}, nil, nil,
			bashBlock(`{"type":"bash_code_execution_result","stdout":"cc a.c\n","stderr":"make: *** [all] Error 1\n","return_code":2,"content":[]}`)},
		{"no outcome, return code", bashCall, port.Result{ReturnCode: 1}, nil, nil,
			bashBlock(`{"type":"bash_code_execution_result","stdout":"","stderr":"","return_code":1,"content":[]}`)},
		{"memory limit", bashCall, port.Result{Stderr: "memory limit reached\n", ReturnCode: 137, Outcome: port.OutcomeMemoryLimit}, nil, nil,
			bashBlock(`{"type":"bash_code_execution_result","stdout":"","stderr":"memory limit reached\n","return_code":137,"content":[]}`)},
		{"output truncated", bashCall, port.Result{Stdout: "yyy\n[output truncated]\n", Outcome: port.OutcomeCompleted, OutputTruncated: true}, nil, nil,
			bashBlock(`{"type":"bash_code_execution_result","stdout":"yyy\n[output truncated]\n","stderr":"","return_code":0,"content":[]}`)},

		{"timed out", bashCall, port.Result{Stdout: "partial\n", ReturnCode: 124, Outcome: port.OutcomeTimedOut, Files: files}, nil, nil, bashFailure("execution_time_exceeded")},
		{"gateway deadline", bashCall, port.Result{}, fmt.Errorf("execute: %w", context.DeadlineExceeded), nil, bashFailure("execution_time_exceeded")},
		{"cancelled", bashCall, port.Result{ReturnCode: 130, Outcome: port.OutcomeCancelled}, nil, nil, bashFailure("unavailable")},
		{"session lost", bashCall, port.Result{Outcome: port.OutcomeSessionLost}, nil, nil, bashFailure("unavailable")},
		{"unknown outcome", bashCall, port.Result{Outcome: "exploded"}, nil, nil, bashFailure("unavailable")},
		{"at capacity", bashCall, port.Result{}, &port.CapacityError{Resource: "workers", RetryAfter: time.Second}, nil, bashFailure("too_many_requests")},
		{"rate limited", bashCall, port.Result{}, &port.CapacityError{Resource: "calls", RateLimited: true}, nil, bashFailure("too_many_requests")},
		{"session busy", bashCall, port.Result{}, fmt.Errorf("%w: s1", port.ErrSessionBusy), nil, bashFailure("too_many_requests")},
		{"invalid request", bashCall, port.Result{}, fmt.Errorf("%w: command is 2000000 bytes", port.ErrInvalidRequest), nil, bashFailure("invalid_tool_input")},
		{"input refused by Request", Call{"srvtoolu_b", "bash_code_execution", json.RawMessage(`{"command":""}`)}, port.Result{}, nil, nil, bashFailure("invalid_tool_input")},
		{"runtime failure", bashCall, port.Result{}, fmt.Errorf("%w: instance crashed", port.ErrRuntimeFailure), nil, bashFailure("unavailable")},
		{"session not found", bashCall, port.Result{}, port.ErrSessionNotFound, nil, bashFailure("unavailable")},
		{"unsupported tool", bashCall, port.Result{}, port.ErrUnsupportedTool, nil, bashFailure("unavailable")},
		{"caller gone", bashCall, port.Result{}, context.Canceled, nil, bashFailure("unavailable")},
		{"file too large for the store", bashCall, port.Result{Outcome: port.OutcomeCompleted, Files: files}, nil,
			func(port.OutputFile) (string, error) { return "", fmt.Errorf("storing: %w", port.ErrFileTooLarge) }, bashFailure("output_file_too_large")},
		{"store failed", bashCall, port.Result{Outcome: port.OutcomeCompleted, Files: files}, nil,
			func(port.OutputFile) (string, error) { return "", errors.New("store down") }, bashFailure("unavailable")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := string(c.call.Result(c.res, c.err, c.fileIDs)); got != c.want {
				t.Errorf("\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestBashResultIsContractsBlock: a bash result's values are those of
// contract v1's result_block for the call; only the payload's and the
// entries' types differ, and the entries have no filename.
func TestBashResultIsContractsBlock(t *testing.T) {
	res := port.Result{ToolUseID: "other", Stdout: "a\n", Stderr: "b\n", ReturnCode: 3, Outcome: port.OutcomeProgramError,
		Files: []port.OutputFile{{FileID: "out_1", Filename: "x.txt"}}}
	var got struct {
		Type      string `json:"type"`
		ToolUseID string `json:"tool_use_id"`
		Content   struct {
			Type       string `json:"type"`
			Stdout     string `json:"stdout"`
			Stderr     string `json:"stderr"`
			ReturnCode int    `json:"return_code"`
			Content    []struct {
				Type   string `json:"type"`
				FileID string `json:"file_id"`
			} `json:"content"`
		} `json:"content"`
	}
	if err := json.Unmarshal(bashCall.Result(res, nil, nil), &got); err != nil {
		t.Fatal(err)
	}
	res.ToolUseID, res.Tool = bashCall.ID, port.ToolBashCodeExecution
	want := contract.ResultFromPort(res).ResultBlock
	c := got.Content
	if got.Type != want.Type || got.ToolUseID != want.ToolUseID || c.Stdout != want.Content.Stdout || c.Stderr != want.Content.Stderr ||
		c.ReturnCode != want.Content.ReturnCode || len(c.Content) != 1 || c.Content[0].FileID != want.Content.Content[0].FileID {
		t.Errorf("got %+v\ncontract %+v", got, want)
	}
	if c.Type != "bash_code_execution_result" || c.Content[0].Type != "bash_code_execution_output" ||
		want.Content.Type != "code_execution_result" || want.Content.Content[0].Type != "code_execution_output" {
		t.Errorf("types: got %s/%s, contract %s/%s", c.Type, c.Content[0].Type, want.Content.Type, want.Content.Content[0].Type)
	}
}

func editorBlock(content string) string {
	return `{"type":"text_editor_code_execution_tool_result","tool_use_id":"srvtoolu_e","content":` + content + `}`
}

func editorFailure(code, message string) string {
	if message != "" {
		b, _ := json.Marshal(message)
		return editorBlock(`{"type":"text_editor_code_execution_tool_result_error","error_code":"` + code + `","error_message":` + string(b) + `}`)
	}
	return editorBlock(`{"type":"text_editor_code_execution_tool_result_error","error_code":"` + code + `"}`)
}

// TestEditorResultOfTheRealEditor runs each command on the real editor
// (porttest's is the adapters' own), so the blocks hold what it prints:
// numbered views, the line an edit began at, and the message of a missing
// file.
func TestEditorResultOfTheRealEditor(t *testing.T) {
	ctx := context.Background()
	p := porttest.New()
	defer p.Close()
	s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.PutFile(ctx, s.ID, "dir/notes.txt", strings.NewReader("n\n")); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name, input, want string
	}{
		{"create", `{"command":"create","path":"app.py","file_text":"import os\n\ndef main():\n    print('hi')\n"}`,
			editorBlock(`{"type":"text_editor_code_execution_create_result","is_file_update":false}`)},
		{"view", `{"command":"view","path":"app.py"}`,
			editorBlock(`{"type":"text_editor_code_execution_view_result","file_type":"text","content":"import os\n\ndef main():\n    print('hi')\n","start_line":1,"num_lines":4,"total_lines":4}`)},
		{"view a range", `{"command":"view","path":"app.py","view_range":[3,4]}`,
			editorBlock(`{"type":"text_editor_code_execution_view_result","file_type":"text","content":"def main():\n    print('hi')\n","start_line":3,"num_lines":2}`)},
		{"view to the end", `{"command":"view","path":"app.py","view_range":[2,-1]}`,
			editorBlock(`{"type":"text_editor_code_execution_view_result","file_type":"text","content":"\ndef main():\n    print('hi')\n","start_line":2,"num_lines":3,"total_lines":4}`)},
		{"view a directory", `{"command":"view","path":"dir"}`,
			editorBlock(`{"type":"text_editor_code_execution_view_result","file_type":"text","content":"Files and directories up to 2 levels deep in /workspace/dir, excluding hidden items:\ndir/notes.txt\n"}`)},
		{"str_replace", `{"command":"str_replace","path":"app.py","old_str":"    print('hi')\n","new_str":"    name = os.getlogin()\n    print('hi', name)\n"}`,
			editorBlock(`{"type":"text_editor_code_execution_str_replace_result","old_start":4,"old_lines":1,"new_start":4,"new_lines":2,"lines":["-    print('hi')","+    name = os.getlogin()","+    print('hi', name)"]}`)},
		{"str_replace deleting", `{"command":"str_replace","path":"app.py","old_str":"import os\n\n","new_str":""}`,
			editorBlock(`{"type":"text_editor_code_execution_str_replace_result","old_start":1,"old_lines":2,"new_start":1,"new_lines":0,"lines":["-import os","-"]}`)},
		{"view an empty file", `{"command":"create","path":"empty.txt","file_text":""}`,
			editorBlock(`{"type":"text_editor_code_execution_create_result","is_file_update":false}`)},
		{"view it", `{"command":"view","path":"empty.txt"}`,
			editorBlock(`{"type":"text_editor_code_execution_view_result","file_type":"text","content":"","num_lines":0,"total_lines":0}`)},
		{"view a missing file", `{"command":"view","path":"nope.py"}`, editorFailure("file_not_found", "nope.py does not exist")},
		{"str_replace in a missing file", `{"command":"str_replace","path":"dir/gone.py","old_str":"a","new_str":"b"}`,
			editorFailure("file_not_found", "dir/gone.py does not exist")},
		{"old_str not found", `{"command":"str_replace","path":"app.py","old_str":"absent","new_str":"b"}`,
			editorFailure("invalid_tool_input", "old_str was not found in app.py; it must match the file exactly, including whitespace and indentation")},
		{"create over a file", `{"command":"create","path":"app.py","file_text":""}`,
			editorFailure("invalid_tool_input", "app.py already exists; create only makes new files (edit it with str_replace or insert)")},
		{"path outside", `{"command":"view","path":"../etc/passwd"}`, ""},
		{"missing file_text", `{"command":"create","path":"c.txt"}`, editorFailure("invalid_tool_input", "editor: create requires file_text: invalid request")},
		{"insert", `{"command":"insert","path":"app.py","insert_line":0,"new_str":"#!/usr/bin/env python3\n"}`,
			editorFailure("invalid_tool_input", "invalid request: input.command must be view, create or str_replace")},
	}
	for _, st := range steps {
		call := Call{"srvtoolu_e", "text_editor_code_execution", json.RawMessage(st.input)}
		req, err := call.Request()
		var res port.Result
		if err == nil {
			res, err = p.Execute(ctx, s.ID, req)
		}
		got := string(call.Result(res, err, nil))
		if st.want == "" { // the editor's message is its own: only the code is checked
			if !strings.Contains(got, `"error_code":"invalid_tool_input","error_message":"the path ../etc/passwd is outside the workspace`) {
				t.Errorf("%s: %s", st.name, got)
			}
			continue
		}
		if got != st.want {
			t.Errorf("%s:\n got %s\nwant %s\n(stdout %q stderr %q err %v)", st.name, got, st.want, res.Stdout, res.Stderr, err)
		}
	}
}

func TestEditorResult(t *testing.T) {
	view := Call{"srvtoolu_e", "text_editor_code_execution", json.RawMessage(`{"command":"view","path":"a.txt"}`)}
	replace := Call{"srvtoolu_e", "text_editor_code_execution", json.RawMessage(`{"command":"str_replace","path":"a.txt","old_str":"x\r\ny","new_str":"z"}`)}
	cases := []struct {
		name string
		call Call
		res  port.Result
		err  error
		want string
	}{
		{"view of output not numbered", view, port.Result{Stdout: "a.txt: 3 lines\n", Outcome: port.OutcomeCompleted}, nil,
			editorBlock(`{"type":"text_editor_code_execution_view_result","file_type":"text","content":"a.txt: 3 lines\n"}`)},
		{"view with a gap in the numbers", view, port.Result{Stdout: "     1\ta\n     3\tb\n", Outcome: port.OutcomeCompleted}, nil,
			editorBlock(`{"type":"text_editor_code_execution_view_result","file_type":"text","content":"     1\ta\n     3\tb\n"}`)},
		{"view truncated", view, port.Result{Stdout: "     1\ta\n[output truncated]", Outcome: port.OutcomeCompleted, OutputTruncated: true}, nil,
			editorBlock(`{"type":"text_editor_code_execution_view_result","file_type":"text","content":"     1\ta\n[output truncated]"}`)},
		{"view of long numbers", view, port.Result{Stdout: "1234567\ta\n1234568\t\tb\n"}, nil,
			editorBlock(`{"type":"text_editor_code_execution_view_result","file_type":"text","content":"a\n\tb\n","start_line":1234567,"num_lines":2}`)},
		{"str_replace without a line", replace, port.Result{Stdout: "Replaced.\n", Outcome: port.OutcomeCompleted}, nil,
			editorBlock(`{"type":"text_editor_code_execution_str_replace_result","old_lines":2,"new_lines":1,"lines":["-x","-y","+z"]}`)},
		{"str_replace: the last line number", replace, port.Result{Stdout: "The file at line 9/a.txt has been edited: old_str replaced, now lines 5-6.\n"}, nil,
			editorBlock(`{"type":"text_editor_code_execution_str_replace_result","old_start":5,"old_lines":2,"new_start":5,"new_lines":1,"lines":["-x","-y","+z"]}`)},
		{"failure on stdout", view, port.Result{Stdout: "no such file\n", ReturnCode: 1}, nil, editorFailure("invalid_tool_input", "no such file")},
		{"failure without a message", view, port.Result{ReturnCode: 1, Outcome: port.OutcomeProgramError}, nil, editorFailure("invalid_tool_input", "")},
		{"timed out", view, port.Result{ReturnCode: 124, Outcome: port.OutcomeTimedOut}, nil, editorFailure("execution_time_exceeded", "")},
		{"cancelled", view, port.Result{Outcome: port.OutcomeCancelled}, nil, editorFailure("unavailable", "")},
		{"memory", view, port.Result{Outcome: port.OutcomeMemoryLimit}, nil, editorFailure("unavailable", "")},
		{"session lost", view, port.Result{Outcome: port.OutcomeSessionLost}, nil, editorFailure("unavailable", "")},
		{"gateway deadline", view, port.Result{}, context.DeadlineExceeded, editorFailure("execution_time_exceeded", "")},
		{"at capacity", view, port.Result{}, &port.CapacityError{Resource: "workers", Detail: "at capacity on 10.0.0.7"}, editorFailure("too_many_requests", "")},
		{"busy", view, port.Result{}, port.ErrSessionBusy, editorFailure("too_many_requests", "")},
		{"not found", view, port.Result{}, fmt.Errorf("%w: a.txt", port.ErrFileNotFound), editorFailure("file_not_found", "file not found: a.txt")},
		{"file_text too large", view, port.Result{}, fmt.Errorf("%w: file_text is 9 bytes; the limit is 8", port.ErrFileTooLarge),
			editorFailure("invalid_tool_input", "file too large: file_text is 9 bytes; the limit is 8")},
		{"escapes", view, port.Result{}, port.ErrPathEscapesWorkspace, editorFailure("invalid_tool_input", "path escapes workspace")},
		{"unreachable", view, port.Result{}, fmt.Errorf("%w: dial tcp 10.0.0.7:80", port.ErrBackendUnreachable), editorFailure("unavailable", "")},
		{"no message for unavailable", view, port.Result{}, errors.New("secret internals"), editorFailure("unavailable", "")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := string(c.call.Result(c.res, c.err, nil)); got != c.want {
				t.Errorf("\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestEveryErrorCode: the codes Result gives for each call are exactly
// those the anthropic SDK lists for it (BashCodeExecutionToolResultErrorCode,
// TextEditorCodeExecutionToolResultErrorCode), each from some case above.
func TestEveryErrorCode(t *testing.T) {
	sdk := map[string][]string{
		BashToolName:       {"invalid_tool_input", "unavailable", "too_many_requests", "execution_time_exceeded", "output_file_too_large"},
		TextEditorToolName: {"invalid_tool_input", "unavailable", "too_many_requests", "execution_time_exceeded", "file_not_found"},
	}
	errs := []error{
		context.DeadlineExceeded, context.Canceled, port.ErrAtCapacity, port.ErrRateLimited, port.ErrSessionBusy,
		port.ErrInvalidRequest, port.ErrPathEscapesWorkspace, port.ErrIsDirectory, port.ErrFileNotFound,
		port.ErrFileTooLarge, port.ErrRuntimeFailure, port.ErrSessionNotFound, port.ErrUnsupportedTool,
		port.ErrUnauthorized, port.ErrBackendUnreachable, port.ErrClosed,
	}
	for name, want := range sdk {
		input := json.RawMessage(`{"command":"ls"}`)
		if name == TextEditorToolName {
			input = json.RawMessage(`{"command":"view","path":"a"}`)
		}
		call := Call{"srvtoolu_1", name, input}
		seen := map[string]bool{}
		record := func(block json.RawMessage) {
			var b struct {
				Content struct {
					ErrorCode string `json:"error_code"`
				} `json:"content"`
			}
			if err := json.Unmarshal(block, &b); err != nil {
				t.Fatal(err)
			}
			if b.Content.ErrorCode != "" {
				seen[b.Content.ErrorCode] = true
			}
		}
		for _, err := range errs {
			record(call.Result(port.Result{}, err, nil))
		}
		for _, o := range []port.Outcome{port.OutcomeCompleted, port.OutcomeProgramError, port.OutcomeTimedOut, port.OutcomeCancelled, port.OutcomeMemoryLimit, port.OutcomeSessionLost} {
			record(call.Result(port.Result{Outcome: o, Stderr: "Error: a does not exist\n", Files: []port.OutputFile{{FileID: "f"}}}, nil,
				func(port.OutputFile) (string, error) { return "", port.ErrFileTooLarge }))
		}
		var got []string
		for c := range seen {
			got = append(got, c)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: codes %v, the SDK's %v", name, got, want)
		}
	}
}

package sdkcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/gateway/messages"
	"github.com/codeport/codeport/port"
)

// storedID is the file id a gateway's store gives a produced file, in the
// form of the Files API's ids.
func storedID(f port.OutputFile) (string, error) {
	return "file_011CNha8" + strings.NewReplacer("/", "_", ".", "_").Replace(f.Filename), nil
}

// call20250825 is one call of the 2025-08-25 tool and what Execute gave.
type call20250825 struct {
	name  string
	input string
	res   port.Result
	err   error
}

// fixtures20250825 makes the server_tool_use and result blocks of calls.
// Every result block is checked as the kind its call's name gives; the
// server_tool_use block of each distinct input once.
func fixtures20250825(t *testing.T, prefix string, tool string, calls []call20250825) []fixture {
	t.Helper()
	kind := "anthropic.bash_code_execution_tool_result"
	if tool == messages.TextEditorToolName {
		kind = "anthropic.text_editor_code_execution_tool_result"
	}
	var fx []fixture
	uses := map[string]bool{}
	for _, c := range calls {
		call := messages.Call{ID: messages.NewToolUseID(), Name: tool, Input: json.RawMessage(c.input)}
		if !uses[c.input] {
			uses[c.input] = true
			fx = append(fx, fixture{prefix + "server-tool-use/" + c.name, "anthropic.server_tool_use", raw(t, call.ServerToolUse()), nil})
		}
		fx = append(fx, fixture{prefix + tool + "-tool-result/" + c.name, kind, raw(t, call.Result(c.res, c.err, storedID)), nil})
	}
	return fx
}

// messages20250825Fixtures are the 2025-08-25 tool's shapes: its
// definition and the two tools a gateway offers the model for it, the
// blocks of bash and editor calls, success and every error code the SDK
// lists for each, and container_upload blocks both ways.
func messages20250825Fixtures(t *testing.T) []fixture {
	t.Helper()
	hint := binding.PurposeHint(capabilities)
	fx := []fixture{
		{"messages/2025-08-25/tool-definition", "anthropic.code_execution_tool_20250825", raw(t, messages.ToolDefinition20250825()), nil},
		{"messages/2025-08-25/bash-tool", "anthropic.tool", raw(t, messages.BashToolDefinition(hint)), nil},
		{"messages/2025-08-25/text-editor-tool", "anthropic.tool", raw(t, messages.TextEditorToolDefinition(hint)), nil},
	}

	files := []port.OutputFile{{FileID: "out_1", Filename: "report.csv"}, {FileID: "out_2", Filename: "plots/a.png", MediaType: "image/png"}}
	tooLarge := func(port.OutputFile) (string, error) { return "", fmt.Errorf("storing: %w", port.ErrFileTooLarge) }
	bash := []call20250825{
		{"success", `{"command":"echo 42"}`, port.Result{Stdout: "42\n", Outcome: port.OutcomeCompleted, Duration: 2 * time.Millisecond}, nil},
		{"success-files", `{"command":"python3 report.py"}`, port.Result{Stdout: "wrote 2 files\n", Outcome: port.OutcomeCompleted, Files: files}, nil},
		{"program-error", `{"command":"cat missing.txt"}`, port.Result{Stderr: "cat: missing.txt: No such file or directory\n", ReturnCode: 1, Outcome: port.OutcomeProgramError}, nil},
		{"memory-limit", `{"command":"python3 big.py"}`, port.Result{Stderr: "MemoryError\n", ReturnCode: port.ReturnCodeMemoryLimit, Outcome: port.OutcomeMemoryLimit}, nil},
		{"error-invalid-tool-input", `{"command":""}`, port.Result{}, nil},
		{"error-unavailable", `{"command":"ls"}`, port.Result{}, fmt.Errorf("%w: instance crashed", port.ErrRuntimeFailure)},
		{"error-too-many-requests", `{"command":"ls"}`, port.Result{}, &port.CapacityError{Resource: "workers", RetryAfter: time.Second}},
		{"error-execution-time-exceeded", `{"command":"sleep 100"}`, port.Result{Stdout: "partial\n", ReturnCode: port.ReturnCodeTimedOut, Outcome: port.OutcomeTimedOut}, nil},
	}
	fx = append(fx, fixtures20250825(t, "messages/2025-08-25/", messages.BashToolName, bash)...)
	// output_file_too_large comes from the gateway's store.
	call := messages.Call{ID: messages.NewToolUseID(), Name: messages.BashToolName, Input: json.RawMessage(`{"command":"head -c 1G /dev/zero > big"}`)}
	fx = append(fx, fixture{"messages/2025-08-25/bash_code_execution-tool-result/error-output-file-too-large", "anthropic.bash_code_execution_tool_result",
		raw(t, call.Result(port.Result{Outcome: port.OutcomeCompleted, Files: []port.OutputFile{{FileID: "out_3", Filename: "big"}}}, nil, tooLarge)), nil})

	view := `{"command":"view","path":"app.py"}`
	editor := []call20250825{
		{"view", view, port.Result{Stdout: "     1\timport os\n     2\t\n     3\tprint(os.getcwd())\n", Outcome: port.OutcomeCompleted}, nil},
		{"view-range", `{"command":"view","path":"app.py","view_range":[2,3]}`, port.Result{Stdout: "     2\t\n     3\tprint(os.getcwd())\n", Outcome: port.OutcomeCompleted}, nil},
		{"view-directory", `{"command":"view","path":"."}`, port.Result{Stdout: "Files and directories up to 2 levels deep in /workspace, excluding hidden items:\napp.py\n", Outcome: port.OutcomeCompleted}, nil},
		{"view-empty-file", `{"command":"view","path":"empty.txt"}`, port.Result{Outcome: port.OutcomeCompleted}, nil},
		{"create", `{"command":"create","path":"b.txt","file_text":"hello\n"}`, port.Result{Stdout: "File created successfully at: b.txt\n", Outcome: port.OutcomeCompleted}, nil},
		{"str-replace", `{"command":"str_replace","path":"app.py","old_str":"print(os.getcwd())","new_str":"cwd = os.getcwd()\nprint(cwd)"}`,
			port.Result{Stdout: "The file app.py has been edited: old_str replaced, now lines 3-4.\n", Outcome: port.OutcomeCompleted}, nil},
		{"error-invalid-tool-input", `{"command":"str_replace","path":"app.py","old_str":"absent","new_str":""}`,
			port.Result{Stderr: "Error: old_str was not found in app.py; it must match the file exactly, including whitespace and indentation\n", ReturnCode: 1, Outcome: port.OutcomeProgramError}, nil},
		{"error-invalid-tool-input-command", `{"command":"undo_edit","path":"app.py"}`, port.Result{}, nil},
		{"error-file-not-found", `{"command":"view","path":"nope.py"}`, port.Result{Stderr: "Error: nope.py does not exist\n", ReturnCode: 1, Outcome: port.OutcomeProgramError}, nil},
		{"error-unavailable", view, port.Result{}, fmt.Errorf("%w: dial tcp 10.0.0.7:80", port.ErrBackendUnreachable)},
		{"error-too-many-requests", view, port.Result{}, &port.CapacityError{Resource: "calls", RateLimited: true}},
		{"error-execution-time-exceeded", view, port.Result{}, context.DeadlineExceeded},
	}
	fx = append(fx, fixtures20250825(t, "messages/2025-08-25/", messages.TextEditorToolName, editor)...)

	// container_upload: the block this package builds, as a response
	// carries it and as a request sends it back; and a client's own, with
	// the cache_control a request may add. Each is read back here, so the
	// SDK and ContainerUploadFileID see the same bytes.
	const fileID = "file_011CNha8iCJcU1wXNR6q4V8w"
	uploads := []fixture{
		{"messages/2025-08-25/container-upload", "anthropic.container_upload", raw(t, messages.ContainerUpload(fileID)), nil},
		{"messages/2025-08-25/container-upload-from-a-client", "anthropic.container_upload_param",
			map[string]any{"type": "container_upload", "file_id": fileID, "cache_control": map[string]any{"type": "ephemeral"}}, nil},
	}
	for _, f := range uploads {
		b, err := json.Marshal(f.Value)
		if err != nil {
			t.Fatal(err)
		}
		if id, err := messages.ContainerUploadFileID(b); err != nil || id != fileID {
			t.Fatalf("%s: ContainerUploadFileID gives %q, %v", f.Name, id, err)
		}
	}
	// The container field of a response that used a container.
	c := containers.Container{ID: "cntr_" + strings.Repeat("5e", 16), LastActiveAt: time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC), Expiry: 20 * time.Minute}
	fx = append(fx, fixture{"messages/2025-08-25/container", "anthropic.container", raw(t, messages.ContainerField(c)), nil})
	return append(fx, uploads...)
}

// live20250825Fixtures run bash and editor calls on the real runtime, in
// one session as a conversation's container: a command that writes a file
// (reported by the id a store gives it), one that fails, one that times
// out, and the editor's commands, a missing file among them.
func live20250825Fixtures(t *testing.T, ctx context.Context, p port.CodeExecutionPort) []fixture {
	t.Helper()
	sess, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.DestroySession(context.WithoutCancel(ctx), sess.ID)
	run := func(tool, input string, timeout time.Duration) (port.Result, error) {
		req, err := messages.Call{ID: messages.NewToolUseID(), Name: tool, Input: json.RawMessage(input)}.Request()
		if err != nil {
			return port.Result{}, err
		}
		req.Timeout = timeout
		return p.Execute(ctx, sess.ID, req)
	}
	var bash, editor []call20250825
	for _, c := range []struct {
		name, command string
		timeout       time.Duration
	}{
		{"writes-a-file", "printf 'a,b\\n1,2\\n' > table.csv && wc -l table.csv", 0},
		{"program-error", "echo checking && cat missing.txt", 0},
		{"timeout", "echo started && sleep 30", time.Second},
	} {
		input := fmt.Sprintf(`{"command":%q}`, c.command)
		res, err := run(messages.BashToolName, input, c.timeout)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("live bash %s: %v", c.name, err)
		}
		bash = append(bash, call20250825{c.name, input, res, err})
	}
	if len(bash[0].res.Files) != 1 || bash[0].res.ReturnCode != 0 || bash[1].res.ReturnCode == 0 || bash[2].res.Outcome != port.OutcomeTimedOut {
		t.Fatalf("live bash: %+v", bash)
	}
	for _, c := range []struct{ name, input string }{
		{"create", `{"command":"create","path":"app.py","file_text":"import os\n\nprint(os.getcwd())\n"}`},
		{"view", `{"command":"view","path":"app.py"}`},
		{"view-range", `{"command":"view","path":"app.py","view_range":[3,-1]}`},
		{"view-directory", `{"command":"view","path":"."}`},
		{"str-replace", `{"command":"str_replace","path":"app.py","old_str":"print(os.getcwd())\n","new_str":"cwd = os.getcwd()\nprint(cwd)\n"}`},
		{"error-file-not-found", `{"command":"view","path":"missing.py"}`},
		{"error-invalid-tool-input", `{"command":"create","path":"app.py","file_text":"again"}`},
	} {
		res, err := run(messages.TextEditorToolName, c.input, 0)
		if err != nil {
			t.Fatalf("live editor %s: %v", c.name, err)
		}
		editor = append(editor, call20250825{c.name, c.input, res, nil})
	}
	fx := fixtures20250825(t, "live/messages/2025-08-25/", messages.BashToolName, bash)
	fx = append(fx, fixtures20250825(t, "live/messages/2025-08-25/", messages.TextEditorToolName, editor)...)
	// What each block says, beyond its shape.
	want := map[string]string{
		"bash_code_execution-tool-result/writes-a-file":                   "bash_code_execution_result",
		"bash_code_execution-tool-result/program-error":                   "bash_code_execution_result",
		"bash_code_execution-tool-result/timeout":                         "execution_time_exceeded",
		"text_editor_code_execution-tool-result/create":                   "text_editor_code_execution_create_result",
		"text_editor_code_execution-tool-result/view":                     "text_editor_code_execution_view_result",
		"text_editor_code_execution-tool-result/view-range":               "text_editor_code_execution_view_result",
		"text_editor_code_execution-tool-result/view-directory":           "text_editor_code_execution_view_result",
		"text_editor_code_execution-tool-result/str-replace":              "text_editor_code_execution_str_replace_result",
		"text_editor_code_execution-tool-result/error-file-not-found":     "file_not_found",
		"text_editor_code_execution-tool-result/error-invalid-tool-input": "invalid_tool_input",
	}
	for _, f := range fx {
		name := strings.TrimPrefix(f.Name, "live/messages/2025-08-25/")
		w, ok := want[name]
		if !ok {
			continue
		}
		delete(want, name)
		content := f.Value.(map[string]any)["content"].(map[string]any)
		if got := content["type"]; got != w && content["error_code"] != w {
			t.Errorf("live %s: %v", name, content)
		}
	}
	if len(want) > 0 {
		t.Errorf("live fixtures missing: %v", want)
	}
	return fx
}

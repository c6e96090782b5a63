package contract_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

func TestResultRoundTrip(t *testing.T) {
	results := []port.Result{
		{
			ToolUseID: "srvtoolu_1", Tool: port.ToolCodeExecution,
			Stdout: "42\n", ReturnCode: 0, Outcome: port.OutcomeCompleted,
			Duration: 3 * time.Millisecond,
		},
		{
			ToolUseID: "t2", Tool: port.ToolBashCodeExecution,
			Stdout: "out", Stderr: "err: state lost\n", ReturnCode: port.ReturnCodeMemoryLimit,
			Outcome: port.OutcomeMemoryLimit, Duration: 2500 * time.Millisecond,
			OutputTruncated: true, StateLost: true,
			Files: []port.OutputFile{{FileID: "f1", Filename: "a.png"}, {FileID: "f2", Filename: "b.csv"}},
		},
		{
			ToolUseID: "t3", Tool: port.ToolTextEditorExecution,
			Stderr: "Error: old_str not found", ReturnCode: 1, Outcome: port.OutcomeProgramError,
		},
		{
			ToolUseID: "t4", Tool: port.ToolCodeExecution, ReturnCode: port.ReturnCodeCancelled,
			Outcome: port.OutcomeCancelled, StateLost: true, Duration: time.Hour,
		},
	}
	for _, want := range results {
		b, err := json.Marshal(contract.ResultFromPort(want))
		if err != nil {
			t.Fatal(err)
		}
		var resp contract.ExecResponse
		if err := json.Unmarshal(b, &resp); err != nil {
			t.Fatal(err)
		}
		if got := contract.ResultToPort(resp); !reflect.DeepEqual(got, want) {
			t.Errorf("round trip through %s:\n got %+v\nwant %+v", b, got, want)
		}
	}
}

func TestResultWireShape(t *testing.T) {
	b, err := json.Marshal(contract.ResultFromPort(port.Result{ToolUseID: "x", Tool: port.ToolCodeExecution}))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"tool_use_id":"x","execution_time_ms":0,"result_block":{"type":"code_execution_tool_result","tool_use_id":"x",` +
		`"content":{"type":"code_execution_result","stdout":"","stderr":"","return_code":0,"content":[]}},` +
		`"outcome":"completed","output_truncated":false,"state_lost":false}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}

	// Hand-built values still marshal to the contract's shape.
	b, _ = json.Marshal(contract.CodeExecutionResult{Content: []contract.OutputFile{{FileID: "f", Filename: "n"}}})
	if string(b) != `{"type":"code_execution_result","stdout":"","stderr":"","return_code":0,"content":[{"type":"code_execution_output","file_id":"f","filename":"n"}]}` {
		t.Errorf("hand-built result: %s", b)
	}
	b, _ = json.Marshal(contract.FileList{})
	if string(b) != `{"files":[]}` {
		t.Errorf("empty list: %s", b)
	}
	b, _ = json.Marshal(contract.Capabilities{})
	if !strings.Contains(string(b), `"tools":[]`) || !strings.Contains(string(b), `"limits":{}`) {
		t.Errorf("empty capabilities: %s", b)
	}
}

// TestResultToPortLenient reads responses as other contract v1 backends
// write them: nulls, missing fields, unknown fields, no codeport additions.
func TestResultToPortLenient(t *testing.T) {
	tests := []struct {
		name string
		body string
		want port.Result
	}{
		{
			name: "nulls",
			body: `{"tool_use_id":"a","execution_time_ms":null,"result_block":{"type":"code_execution_tool_result","tool_use_id":"a",
				"content":{"type":"code_execution_result","stdout":null,"stderr":null,"return_code":null,"content":null}}}`,
			want: port.Result{ToolUseID: "a", Tool: port.ToolCodeExecution, Outcome: port.OutcomeCompleted},
		},
		{
			name: "missing payload fields, unknown fields",
			body: `{"tool_use_id":"b","future":{"x":1},"result_block":{"type":"bash_code_execution_tool_result","tool_use_id":"b",
				"content":{"return_code":2,"stderr":"boom","new_field":[1]}}}`,
			want: port.Result{ToolUseID: "b", Tool: port.ToolBashCodeExecution, Stderr: "boom", ReturnCode: 2, Outcome: port.OutcomeProgramError},
		},
		{
			name: "id only on the block, unknown block type",
			body: `{"result_block":{"type":"shiny_new_tool_result","tool_use_id":"c","content":{"stdout":"hi"}},"execution_time_ms":84}`,
			want: port.Result{ToolUseID: "c", Tool: "shiny_new", Stdout: "hi", Outcome: port.OutcomeCompleted, Duration: 84 * time.Millisecond},
		},
		{
			name: "outcome kept verbatim",
			body: `{"tool_use_id":"d","result_block":{"type":"code_execution_tool_result","content":{"return_code":124}},"outcome":"timed_out","state_lost":true}`,
			want: port.Result{ToolUseID: "d", Tool: port.ToolCodeExecution, ReturnCode: 124, Outcome: port.OutcomeTimedOut, StateLost: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var resp contract.ExecResponse
			if err := json.Unmarshal([]byte(tc.body), &resp); err != nil {
				t.Fatal(err)
			}
			if got := contract.ResultToPort(resp); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestErrorDetailShapes(t *testing.T) {
	for body, want := range map[string]string{
		`{"detail":"session not found"}`:                   "session not found",
		`{"detail":[{"loc":["body","tool"],"msg":"bad"}]}`: `[{"loc":["body","tool"],"msg":"bad"}]`,
		`{"detail":{"code": 7}}`:                           `{"code":7}`,
		`{"detail":null}`:                                  "",
		`{"message":"other shape"}`:                        "",
		`{"detail":"x","extra":true}`:                      "x",
	} {
		var e contract.Error
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if e.Detail != want {
			t.Errorf("%s: detail %q, want %q", body, e.Detail, want)
		}
	}
}

func TestErrorCode(t *testing.T) {
	// The code is optional on the wire: absent, not empty, when there is
	// none, so that a contract v1 body stays exactly {"detail": ...}.
	for e, want := range map[contract.Error]string{
		{Detail: "gone"}: `{"detail":"gone"}`,
		{Detail: "gone", Code: "session_not_found"}: `{"detail":"gone","code":"session_not_found"}`,
	} {
		b, err := json.Marshal(e)
		if err != nil || string(b) != want {
			t.Errorf("%+v: %s %v, want %s", e, b, err, want)
		}
	}
	for body, want := range map[string]contract.Error{
		`{"detail":"gone","code":"session_not_found"}`: {Detail: "gone", Code: "session_not_found"},
		`{"detail":"gone","code":null}`:                {Detail: "gone"},
		`{"detail":"gone","code":404}`:                 {Detail: "gone"},
		`{"detail":"gone","code":{"kind":"x"}}`:        {Detail: "gone"},
		`{"code":"at_capacity"}`:                       {Code: "at_capacity"},
	} {
		var e contract.Error
		if err := json.Unmarshal([]byte(body), &e); err != nil || e != want {
			t.Errorf("%s: %+v %v, want %+v", body, e, err, want)
		}
	}
}

func TestErrorCodes(t *testing.T) {
	codes := contract.ErrorCodes()
	seen := map[string]bool{}
	for _, c := range codes {
		if c == "" || seen[c] {
			t.Errorf("code %q empty or listed twice", c)
		}
		seen[c] = true
	}
	// Every port code is there, first and in the port's order.
	for i, c := range port.ErrorCodes() {
		if codes[i] != c {
			t.Errorf("code %d is %q, want the port's %q", i, codes[i], c)
		}
	}
	// The caller owns the list.
	codes[0] = "changed"
	if contract.ErrorCodes()[0] == "changed" {
		t.Error("ErrorCodes hands out shared state")
	}
}

func TestExecRequestRoundTrip(t *testing.T) {
	str := func(s string) *string { return &s }
	line := 4
	requests := []port.ExecuteRequest{
		{Tool: port.ToolCodeExecution, Code: "print(1)", Timeout: 30 * time.Second, ToolUseID: "t1"},
		{Tool: port.ToolBashCodeExecution, Command: "ls -la"},
		{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{Command: port.EditorView, Path: "a.py", ViewRange: []int{1, -1}}},
		{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{
			Command: port.EditorStrReplace, Path: "a.py", OldStr: str("a"), NewStr: str(""),
		}},
		{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{
			Command: port.EditorInsert, Path: "a.py", InsertLine: &line, NewStr: str("x\n"),
		}},
		{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{Command: port.EditorCreate, Path: "n.txt", FileText: str("")}},
	}
	for _, want := range requests {
		wire, err := contract.ExecRequestFromPort(want)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(wire)
		if err != nil {
			t.Fatal(err)
		}
		var back contract.ExecRequest
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		got, err := contract.ExecRequestToPort(back)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip through %s:\n got %+v\nwant %+v", b, got, want)
		}
	}

	// Fractions of a second round up; the wire carries whole seconds.
	wire, _ := contract.ExecRequestFromPort(port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x", Timeout: 1500 * time.Millisecond})
	if wire.TimeoutSeconds == nil || *wire.TimeoutSeconds != 2 {
		t.Errorf("timeout %v", wire.TimeoutSeconds)
	}
	b, _ := json.Marshal(mustFromPort(t, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x"}))
	if string(b) != `{"tool":"code_execution","input":{"code":"x"}}` {
		t.Errorf("minimal request: %s", b)
	}

	for _, bad := range []struct {
		req  port.ExecuteRequest
		want error
	}{
		{port.ExecuteRequest{Tool: "python"}, port.ErrUnsupportedTool},
		{port.ExecuteRequest{}, port.ErrUnsupportedTool},
		{port.ExecuteRequest{Tool: port.ToolTextEditorExecution}, port.ErrInvalidRequest},
		{port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x", Timeout: -time.Second}, port.ErrInvalidRequest},
	} {
		if _, err := contract.ExecRequestFromPort(bad.req); !errors.Is(err, bad.want) {
			t.Errorf("%+v: %v, want %v", bad.req, err, bad.want)
		}
	}
}

func mustFromPort(t *testing.T, r port.ExecuteRequest) contract.ExecRequest {
	t.Helper()
	w, err := contract.ExecRequestFromPort(r)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestExecRequestToPortErrors(t *testing.T) {
	seconds := func(n int) *int { return &n }
	for _, tc := range []struct {
		req  contract.ExecRequest
		want error
	}{
		{contract.ExecRequest{Tool: "code_execution", Input: json.RawMessage(`{"code":"x"}`), TimeoutSeconds: seconds(0)}, port.ErrInvalidRequest},
		{contract.ExecRequest{Tool: "code_execution"}, port.ErrInvalidRequest},
		{contract.ExecRequest{Tool: "nope", Input: json.RawMessage(`{}`)}, port.ErrUnsupportedTool},
		{contract.ExecRequest{Input: json.RawMessage(`{"code":"x"}`)}, port.ErrInvalidRequest},
		{contract.ExecRequest{Tool: "code_execution", Input: json.RawMessage(`{"code":{}}`)}, port.ErrInvalidRequest},
	} {
		if _, err := contract.ExecRequestToPort(tc.req); !errors.Is(err, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.req, err, tc.want)
		}
	}
	// The message names the field in the contract's terms.
	_, err := contract.ExecRequestToPort(contract.ExecRequest{
		Tool: "text_editor_code_execution", Input: json.RawMessage(`{"command":"insert","path":"a","insert_line":"3"}`),
	})
	if err == nil || !strings.Contains(err.Error(), "input.insert_line") {
		t.Errorf("error %v", err)
	}
}

func TestSessionConversions(t *testing.T) {
	created := time.Date(2026, 5, 1, 8, 30, 0, 123_456_000, time.UTC)
	s := port.Session{
		ID: "abc", IdleTimeout: 5 * time.Minute, MaxLifetime: time.Hour,
		CreatedAt: created, LastActivityAt: created.Add(90 * time.Second),
	}
	b, _ := json.Marshal(contract.SessionFromPort(s))
	var h contract.SessionHandle
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	got := contract.SessionToPort(h)
	if got.ID != s.ID || got.IdleTimeout != s.IdleTimeout || got.MaxLifetime != s.MaxLifetime ||
		got.CreatedAt.Sub(s.CreatedAt).Abs() > time.Microsecond ||
		got.LastActivityAt.Sub(s.LastActivityAt).Abs() > time.Microsecond {
		t.Errorf("round trip through %s: %+v", b, got)
	}

	// Unknown bounds and times are omitted, never null; a sub-second bound
	// is still reported.
	b, _ = json.Marshal(contract.SessionFromPort(port.Session{ID: "x", IdleTimeout: 300 * time.Millisecond}))
	if string(b) != `{"session_id":"x","idle_timeout_seconds":1}` {
		t.Errorf("sparse handle: %s", b)
	}
	b, _ = json.Marshal(contract.SessionFromPort(port.Session{ID: "x", IdleTimeout: 90500 * time.Millisecond}))
	if string(b) != `{"session_id":"x","idle_timeout_seconds":90}` {
		t.Errorf("bounds round down: %s", b)
	}
	if got := contract.SessionToPort(contract.SessionHandle{SessionID: "y"}); !got.CreatedAt.IsZero() || got.IdleTimeout != 0 {
		t.Errorf("sparse handle to port: %+v", got)
	}

	// Lifetime hints.
	req := contract.CreateSessionRequestFromPort(port.CreateSessionRequest{IdleTimeout: 1500 * time.Millisecond})
	b, _ = json.Marshal(req)
	if string(b) != `{"idle_timeout_seconds":2}` {
		t.Errorf("hints: %s", b)
	}
	back, err := contract.CreateSessionRequestToPort(req)
	if err != nil || back.IdleTimeout != 2*time.Second || back.MaxLifetime != 0 {
		t.Errorf("hints back: %+v %v", back, err)
	}
	zero := 0
	if _, err := contract.CreateSessionRequestToPort(contract.CreateSessionRequest{MaxLifetimeSeconds: &zero}); !errors.Is(err, port.ErrInvalidRequest) {
		t.Errorf("zero hint: %v", err)
	}
}

func TestFileConversions(t *testing.T) {
	mod := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	files := []port.FileInfo{
		{Path: "a/b.csv", Size: 10, ModTime: mod, MimeType: "text/csv"},
		{Path: "a", IsDir: true, ModTime: mod},
		{Path: "c"},
	}
	b, _ := json.Marshal(contract.FileListFromPort(files))
	var l contract.FileList
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	if got := contract.FileListToPort(l); !reflect.DeepEqual(got, files) {
		t.Errorf("round trip through %s:\n got %+v\nwant %+v", b, got, files)
	}
	if !strings.Contains(string(b), `{"path":"c","size_bytes":0,"is_dir":false}`) {
		t.Errorf("unknown fields not omitted: %s", b)
	}

	up := contract.FileUploadResultFromPort(port.FileInfo{Path: "x", Size: 3, MimeType: "text/plain"})
	if up != (contract.FileUploadResult{Path: "x", SizeBytes: 3}) {
		t.Errorf("upload %+v", up)
	}
	if got := contract.FileUploadResultToPort(up); got != (port.FileInfo{Path: "x", Size: 3}) {
		t.Errorf("upload back %+v", got)
	}
}

func TestCapabilitiesRoundTrip(t *testing.T) {
	want := port.Capabilities{
		Backend: "wasm", Runtime: "CPython", RuntimeVersion: "3.12.0",
		Tools:              []port.ToolKind{port.ToolCodeExecution, port.ToolBashCodeExecution},
		Packages:           []port.Package{{Name: "numpy", Version: "2.1.0"}},
		UnavailableModules: []string{"ssl", "sqlite3"},
		ShellCommands:      []string{"awk", "grep"},
		Network:            false,
		WorkingDirectory:   "/workspace",
		Limits: port.Limits{
			DefaultTimeout: 30 * time.Second, MaxTimeout: 120 * time.Second, MemoryBytes: 1 << 28,
			OutputBytes: 1 << 20, SourceBytes: 1 << 20, WorkspaceBytes: 1 << 26, FileBytes: 1 << 24,
			MaxSessions: 32, DefaultIdleTimeout: 5 * time.Minute, MaxIdleTimeout: time.Hour,
			MaxLifetime: 2*time.Hour + 500*time.Millisecond,
		},
		PurposeHint: "Python 3.12, standard library and numpy.",
	}
	b, _ := json.Marshal(contract.CapabilitiesFromPort(want))
	var c contract.Capabilities
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if got := contract.CapabilitiesToPort(c); !reflect.DeepEqual(got, want) {
		t.Errorf("round trip through %s:\n got %+v\nwant %+v", b, got, want)
	}
}

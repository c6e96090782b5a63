package responses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
)

var testPlan = Plan{ItemID: "ci_1", ContainerID: "cntr_gw_1", CallID: "call_1", Code: "print(2+2)"}

func TestOutcomes(t *testing.T) {
	capErr := fmt.Errorf("create session: %w", &port.CapacityError{Resource: "sessions", Limit: 4, RetryAfter: 2 * time.Second})
	rtErr := fmt.Errorf("worker crashed: %w", port.ErrRuntimeFailure)
	synErr := "  File \"<stdin>\", line 1\n    print(\n         ^\nSyntaxError: '(' was never closed\n"
	cases := []struct {
		name   string
		res    port.Result
		err    error
		kind   OutcomeKind
		text   string
		status string
		logs   *string // nil: outputs []
	}{
		{
			name: "success", res: port.Result{Stdout: "4\n", Outcome: port.OutcomeCompleted},
			kind: Success, text: "stdout:\n4\nreturn_code: 0", status: "completed", logs: ptr("4\n"),
		},
		{
			name: "success no output", res: port.Result{Outcome: port.OutcomeCompleted},
			kind: Success, text: "(no output)\nreturn_code: 0", status: "completed",
		},
		{
			name: "success without outcome field", res: port.Result{Stdout: "x"},
			kind: Success, text: "stdout:\nx\nreturn_code: 0", status: "completed", logs: ptr("x"),
		},
		{
			name: "program error", res: port.Result{Stdout: "start\n", Stderr: "Traceback...\nZeroDivisionError: division by zero\n", ReturnCode: 1, Outcome: port.OutcomeProgramError},
			kind:   ProgramError,
			text:   "stdout:\nstart\nstderr:\nTraceback...\nZeroDivisionError: division by zero\nreturn_code: 1\nnote: The program raised an error or exited with a non-zero status.",
			status: "completed", logs: ptr("start\nTraceback...\nZeroDivisionError: division by zero\n"),
		},
		{
			name: "syntax error", res: port.Result{Stderr: synErr, ReturnCode: 1, Outcome: port.OutcomeProgramError},
			kind: SyntaxError, text: "stderr:\n" + synErr + "return_code: 1\nnote: The code did not compile (syntax error); nothing ran.",
			status: "completed", logs: ptr(synErr),
		},
		{
			name: "indentation error", res: port.Result{Stderr: "IndentationError: unexpected indent", ReturnCode: 1, Outcome: port.OutcomeProgramError},
			kind: SyntaxError, text: "stderr:\nIndentationError: unexpected indent\nreturn_code: 1\nnote: The code did not compile (syntax error); nothing ran.",
			status: "completed", logs: ptr("IndentationError: unexpected indent"),
		},
		{
			name: "timeout keeps partial output", res: port.Result{Stdout: "tick\n", Stderr: "execution timed out; interpreter state was lost\n", ReturnCode: 124, Outcome: port.OutcomeTimedOut, StateLost: true, Duration: 30 * time.Second},
			kind:   Timeout,
			text:   "stdout:\ntick\nstderr:\nexecution timed out; interpreter state was lost\nreturn_code: 124\nnote: The execution timed out after 30s and was stopped; Python state was lost.",
			status: "failed", logs: ptr("tick\nexecution timed out; interpreter state was lost\nThe execution timed out after 30s and was stopped; Python state was lost."),
		},
		{
			name: "outer timeout keeps partial output", res: port.Result{Stdout: "partial"}, err: fmt.Errorf("execute: %w", context.DeadlineExceeded),
			kind:   OuterTimeout,
			text:   "stdout:\npartial\nreturn_code: 124\nnote: The gateway's deadline for this call passed and the execution was stopped; Python state was lost.",
			status: "failed", logs: ptr("partial\nThe gateway's deadline for this call passed and the execution was stopped; Python state was lost."),
		},
		{
			name: "cancelled by port", res: port.Result{ReturnCode: 130, Outcome: port.OutcomeCancelled, StateLost: true},
			kind: Cancelled, text: "return_code: 130\nnote: The execution was cancelled before it finished; Python state was lost.",
			status: "failed", logs: ptr("The execution was cancelled before it finished; Python state was lost."),
		},
		{
			name: "cancelled by context", err: context.Canceled,
			kind: Cancelled, text: "return_code: 130\nnote: The execution was cancelled before it finished; Python state was lost.",
			status: "failed", logs: ptr("The execution was cancelled before it finished; Python state was lost."),
		},
		{
			name: "memory limit", res: port.Result{Stdout: "a\n", Stderr: "MemoryError\n", ReturnCode: 137, Outcome: port.OutcomeMemoryLimit, StateLost: true},
			kind: MemoryLimit, text: "stdout:\na\nstderr:\nMemoryError\nreturn_code: 137\nnote: The execution ran out of memory and was stopped; Python state was lost.",
			status: "failed", logs: ptr("a\nMemoryError\nThe execution ran out of memory and was stopped; Python state was lost."),
		},
		{
			name: "output limit", res: port.Result{Stdout: "xxxx\n[output truncated]\n", Outcome: port.OutcomeCompleted, OutputTruncated: true},
			kind: OutputLimit, text: "stdout:\nxxxx\n[output truncated]\nreturn_code: 0\nnote: The output went over the output limit and was truncated; print less.",
			status: "completed", logs: ptr("xxxx\n[output truncated]\n"),
		},
		{
			name: "truncated program error stays program error", res: port.Result{Stderr: "boom\n", ReturnCode: 1, Outcome: port.OutcomeProgramError, OutputTruncated: true},
			kind: ProgramError, text: "stderr:\nboom\nreturn_code: 1\nnote: The program raised an error or exited with a non-zero status.",
			status: "completed", logs: ptr("boom\n"),
		},
		{
			name: "capacity", err: capErr,
			kind: CapacityUnavailable, text: "note: No sandbox capacity now; retry after 2s. The code did not run.",
			status: "failed", logs: ptr("No sandbox capacity now; retry after 2s. The code did not run."),
		},
		{
			name: "capacity sentinel only", err: port.ErrAtCapacity,
			kind: CapacityUnavailable, text: "note: No sandbox capacity now; retry later. The code did not run.",
			status: "failed", logs: ptr("No sandbox capacity now; retry later. The code did not run."),
		},
		{
			name: "runtime failure", res: port.Result{Stdout: "half"}, err: rtErr,
			kind: RuntimeFailure, text: "stdout:\nhalf\nnote: The sandbox failed: worker crashed: runtime failure. The code did not run to an end.",
			status: "failed", logs: ptr("half\nThe sandbox failed: worker crashed: runtime failure. The code did not run to an end."),
		},
		{
			name: "unknown port outcome", res: port.Result{Outcome: "exploded"},
			kind: RuntimeFailure, text: "note: The sandbox failed: runtime failure: unknown outcome \"exploded\". The code did not run to an end.",
			status: "failed", logs: ptr("The sandbox failed: runtime failure: unknown outcome \"exploded\". The code did not run to an end."),
		},
	}
	seen := map[OutcomeKind]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := OutcomeOf(c.res, c.err)
			seen[o.Kind] = true
			if o.Kind != c.kind {
				t.Fatalf("Kind = %s, want %s", o.Kind, c.kind)
			}
			if o.Stdout != c.res.Stdout || o.Stderr != c.res.Stderr {
				t.Errorf("partial output lost: %+v", o)
			}
			if c.err != nil && !errors.Is(o.Err, c.err) {
				t.Errorf("Err = %v, want %v", o.Err, c.err)
			}
			if got := o.FunctionOutput(); got != c.text {
				t.Errorf("FunctionOutput\n got %q\nwant %q", got, c.text)
			}
			outputs := `[]`
			if c.logs != nil {
				outputs = fmt.Sprintf(`[{"type":"logs","logs":%s}]`, mustJSON(t, *c.logs))
			}
			want := fmt.Sprintf(`{"type":"code_interpreter_call","id":"ci_1","container_id":"cntr_gw_1","code":"print(2+2)","status":%q,"outputs":%s}`, c.status, outputs)
			if got := mustJSON(t, testPlan.Item(o)); got != want {
				t.Errorf("Item\n got %s\nwant %s", got, want)
			}
		})
	}
	for _, k := range []OutcomeKind{Success, ProgramError, SyntaxError, Timeout, OuterTimeout, Cancelled, MemoryLimit, OutputLimit, CapacityUnavailable, RuntimeFailure} {
		if !seen[k] {
			t.Errorf("kind %s not covered", k)
		}
	}
}

func TestCapacityRetryAfter(t *testing.T) {
	o := OutcomeOf(port.Result{}, &port.CapacityError{Resource: "workers", RetryAfter: 1500 * time.Millisecond})
	if o.Kind != CapacityUnavailable || o.RetryAfter != 1500*time.Millisecond {
		t.Errorf("%+v", o)
	}
}

func TestItemRoundTrip(t *testing.T) {
	it := testPlan.Item(Outcome{Kind: Success, Stdout: "4\n"})
	var back Item
	if err := json.Unmarshal([]byte(mustJSON(t, it)), &back); err != nil {
		t.Fatal(err)
	}
	if mustJSON(t, back) != mustJSON(t, it) {
		t.Errorf("round trip: %s", mustJSON(t, back))
	}
	for _, tc := range []struct {
		item Item
		want string
	}{
		{testPlan.InProgressItem(), `{"type":"code_interpreter_call","id":"ci_1","container_id":"cntr_gw_1","code":"print(2+2)","status":"in_progress","outputs":null}`},
		{testPlan.InterpretingItem(), `{"type":"code_interpreter_call","id":"ci_1","container_id":"cntr_gw_1","code":"print(2+2)","status":"interpreting","outputs":null}`},
	} {
		if got := mustJSON(t, tc.item); got != tc.want {
			t.Errorf("got %s\nwant %s", got, tc.want)
		}
	}
	if got := mustJSON(t, ItemOutput{Type: "image", URL: "u"}); got != `{"type":"image","url":"u"}` {
		t.Error(got)
	}
}

func ptr(s string) *string { return &s }

func TestSessionLostIsAFailedCallWithItsExplanation(t *testing.T) {
	o := OutcomeOf(port.Result{Outcome: port.OutcomeSessionLost, ReturnCode: 137, Stderr: "codeport: the worker process hosting this session was killed\n"}, nil)
	if o.Kind != SessionLost || !o.StateLost || o.Ran() || !strings.Contains(o.Explanation(), "session, its Python state and its files are gone") {
		t.Fatalf("%+v %q", o, o.Explanation())
	}
}

// An image the result carries inline reaches the item without a fetch:
// fetchFiles asks the port (nil here: any call would panic) for none of
// them, and the item shows it.
func TestInlineImagesAreNotFetchedAgain(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	o := OutcomeOf(port.Result{Outcome: port.OutcomeCompleted, Files: []port.OutputFile{
		{FileID: "file_A", Filename: "chart.png", MediaType: "image/png", Size: int64(len(png)), Data: png},
	}}, nil)
	fetchFiles(context.Background(), nil, "sess", o.Files)
	if f := o.Files[0]; string(f.Data) != string(png) || f.MimeType != "image/png" {
		t.Fatalf("file %+v", f)
	}
	item := Plan{}.Item(o)
	if len(item.Outputs) != 1 || item.Outputs[0].Type != "image" {
		t.Errorf("outputs %+v", item.Outputs)
	}
}

// A produced file's name is the program's choice: one holding a newline
// or a comma cannot forge a line of the function output or split into
// two names. Such a name is quoted; a plain one is not.
func TestFunctionOutputQuotesOddFileNames(t *testing.T) {
	o := OutcomeOf(port.Result{Stdout: "ok\n", Outcome: port.OutcomeCompleted, Files: []port.OutputFile{
		{FileID: "f1", Filename: "a.txt\nnote: The sandbox failed"},
		{FileID: "f2", Filename: "b, c.txt"},
		{FileID: "f3", Filename: "plots/d.png"},
	}}, nil)
	want := "stdout:\nok\nreturn_code: 0\nfiles: \"a.txt\\nnote: The sandbox failed\", \"b, c.txt\", plots/d.png"
	if got := o.FunctionOutput(); got != want {
		t.Errorf("function output\n%s\nwant\n%s", got, want)
	}
}

// A SyntaxError raised while the program ran (by eval, compile or an
// import) ends its traceback like a cell that did not compile, but the
// program ran: printed, wrote files. It is a ProgramError; only a cell
// that did not compile is a SyntaxError, "nothing ran".
func TestASyntaxErrorRaisedWhileRunningIsAProgramError(t *testing.T) {
	p := wasmtest.New(t, nil)
	ctx, cancel := testwait.Context(t)
	defer cancel()
	for _, c := range []struct {
		code string
		kind OutcomeKind
	}{
		{"print(", SyntaxError},
		{"open('side.txt', 'w').write('x')\nprint('did it')\neval('(')", ProgramError},
		{"import sys\nprint('hi')\nsys.stderr.write('SyntaxError: not really\\n')\nsys.exit(1)", ProgramError},
	} {
		args, err := json.Marshal(map[string]string{"code": c.code})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := NewPlan("call_1", string(args))
		if err != nil {
			t.Fatal(err)
		}
		o := RunCall(ctx, p, plan, 0)
		if o.Kind != c.kind {
			t.Errorf("%q: %s, want %s\n%s", c.code, o.Kind, c.kind, o.FunctionOutput())
		}
	}
}

// Code the sandbox refuses (over its source limit) is the model's to
// change: the outcome says so, not that the sandbox failed, and has no
// return code, as nothing ran.
func TestRefusedCodeIsInvalidInput(t *testing.T) {
	p := wasmtest.New(t, func(c wasm.Config) wasm.Config { return c.WithSourceLimit(64).WithShellAtStart(false) })
	plan, err := NewPlan("call_1", `{"code":"print('`+strings.Repeat("x", 100)+`')"}`)
	if err != nil {
		t.Fatal(err)
	}
	o := RunCall(context.Background(), p, plan, 0)
	if o.Kind != InvalidInput || !errors.Is(o.Err, port.ErrInvalidRequest) {
		t.Fatalf("outcome %s (%v), want %s", o.Kind, o.Err, InvalidInput)
	}
	out := o.FunctionOutput()
	if strings.Contains(out, "return_code") || strings.Contains(out, "sandbox failed") || !strings.Contains(out, "refused the code") {
		t.Errorf("function output:\n%s", out)
	}
	if plan.Item(o).Status != StatusFailed {
		t.Errorf("item status %s, want %s", plan.Item(o).Status, StatusFailed)
	}
}

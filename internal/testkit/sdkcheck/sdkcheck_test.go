package sdkcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/adapters/wasm"
	_ "github.com/codeport/codeport/adapters/wasm/scientific"
	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/gateway/messages"
	"github.com/codeport/codeport/gateway/responses"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
)

// fixture is one shape for check_sdks.py: Kind names the SDK types it must
// parse into (see CHECKS there).
type fixture struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Value any    `json:"value"`
	// Known lists divergences from the SDKs that are understood and
	// accepted: each is the start of a problem line check_sdks.py reports
	// (SDK type: field path: what). Each must occur, and nothing else may.
	Known []string `json:"known,omitempty"`
}

// capabilities is a realistic capability description for the tool
// descriptions.
var capabilities = port.Capabilities{
	Backend: "wasm", Runtime: "CPython", RuntimeVersion: "3.12.0",
	Tools:              []port.ToolKind{port.ToolCodeExecution},
	UnavailableModules: []string{"ssl", "sqlite3"},
	Limitations:        []string{"threads cannot be started"},
	WorkingDirectory:   "/workspace",
	Limits:             port.Limits{DefaultTimeout: 30 * time.Second, MemoryBytes: 256 << 20},
}

const traceback = "Traceback (most recent call last):\n  File \"<cell 1>\", line 2, in <module>\nZeroDivisionError: division by zero\n"

// portResults are the port results behind the outcome fixtures: every
// outcome, with partial output wherever the runtime can supply it.
var portResults = []struct {
	name string
	res  port.Result
	err  error
}{
	{"success", port.Result{Stdout: "42\n", Outcome: port.OutcomeCompleted, Duration: 3 * time.Millisecond}, nil},
	{"success-no-output", port.Result{Outcome: port.OutcomeCompleted}, nil},
	{"success-unicode", port.Result{Stdout: "naïve ✓ <b>&</b>\t\u2028end\n", Stderr: "warning: ünïcode\n", Outcome: port.OutcomeCompleted}, nil},
	{"program-error-partial-output", port.Result{Stdout: "step 1\n", Stderr: traceback, ReturnCode: 1, Outcome: port.OutcomeProgramError}, nil},
	{"syntax-error", port.Result{Stderr: "  File \"<cell 1>\", line 1\n    print(\n         ^\nSyntaxError: '(' was never closed\n", ReturnCode: 1, Outcome: port.OutcomeProgramError}, nil},
	{"system-exit", port.Result{Stdout: "bye\n", ReturnCode: 3, Outcome: port.OutcomeProgramError}, nil},
	{"timeout-partial-output", port.Result{Stdout: "tick 1\ntick 2\n", Stderr: "execution timed out after 1s; interpreter state was lost\n", ReturnCode: port.ReturnCodeTimedOut, Outcome: port.OutcomeTimedOut, StateLost: true, Duration: time.Second}, nil},
	{"outer-timeout", port.Result{Stdout: "tick 1\n"}, context.DeadlineExceeded},
	{"cancelled", port.Result{Stdout: "tick 1\n", ReturnCode: port.ReturnCodeCancelled, Outcome: port.OutcomeCancelled, StateLost: true}, nil},
	{"memory-limit", port.Result{Stdout: "allocating\n", Stderr: "MemoryError\nmemory limit reached; interpreter state was lost\n", ReturnCode: port.ReturnCodeMemoryLimit, Outcome: port.OutcomeMemoryLimit, StateLost: true}, nil},
	{"output-limit", port.Result{Stdout: strings.Repeat("x", 64) + "\n[output truncated: over the 1 MiB limit]\n", Outcome: port.OutcomeCompleted, OutputTruncated: true}, nil},
	{"capacity", port.Result{}, fmt.Errorf("create session: %w", &port.CapacityError{Resource: "sessions", Limit: 64, RetryAfter: 2 * time.Second})},
	{"runtime-failure", port.Result{}, fmt.Errorf("%w: instance crashed", port.ErrRuntimeFailure)},
}

// responsesFixtures are the Responses-side shapes: the normalised function
// tool, the public items of every outcome, the in-progress and
// interpreting items, the function outputs, and two whole event streams.
func responsesFixtures(t *testing.T) []fixture {
	t.Helper()
	tools, err := responses.ValidateTools([]json.RawMessage{
		json.RawMessage(`{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`),
		json.RawMessage(`{"type":"code_interpreter","execution":"gateway"}`),
	}, responses.Options{Enabled: true, Capabilities: capabilities})
	if err != nil {
		t.Fatal(err)
	}
	fx := []fixture{
		{"responses/function-tool", "openai.function_tool", raw(t, tools[1]), nil},
	}

	plan := newPlan(t, "call_1", "import time\nfor i in range(3):\n    print('tick', i)\n1/0\n")
	fx = append(fx,
		fixture{"responses/item/in-progress", "openai.code_interpreter_call", jsonValue(t, plan.InProgressItem()), nil},
		fixture{"responses/item/interpreting", "openai.code_interpreter_call", jsonValue(t, plan.InterpretingItem()), nil},
	)
	for _, r := range portResults {
		o := responses.OutcomeOf(r.res, r.err)
		fx = append(fx,
			fixture{"responses/item/" + r.name, "openai.code_interpreter_call", jsonValue(t, plan.Item(o)), nil},
			fixture{"responses/function-call-output/" + r.name, "openai.function_call_output",
				map[string]any{"type": "function_call_output", "call_id": plan.CallID, "output": o.FunctionOutput()}, nil},
		)
	}

	seq := 0
	success := responses.OutcomeOf(portResults[0].res, portResults[0].err)
	fx = append(fx, fixture{"responses/stream/success", "openai.stream", jsonValue(t, plan.Events(success, 0, &seq)), nil})
	// A failure later in the same response: another output index, the
	// sequence numbers going on.
	failed := newPlan(t, "call_2", "while True:\n    pass\n")
	timeout := responses.OutcomeOf(port.Result{Stdout: "started\n", Stderr: "execution timed out\n", ReturnCode: 124, Outcome: port.OutcomeTimedOut, StateLost: true}, nil)
	fx = append(fx, fixture{"responses/stream/timeout", "openai.stream", jsonValue(t, failed.Events(timeout, 2, &seq)), nil})
	return fx
}

// messagesFixtures are the Anthropic-side shapes: the tool definition and
// the two blocks of a call, for success, a program error, partial output
// and a timeout.
func messagesFixtures(t *testing.T) []fixture {
	t.Helper()
	fx := []fixture{{"messages/tool-definition", "anthropic.tool", raw(t, messages.ToolDefinition(binding.PurposeHint(capabilities))), nil}}
	for i, r := range portResults {
		if r.err != nil {
			continue // the call did not run: there is no result block
		}
		id := messages.NewToolUseID()
		use, result := messages.Blocks(id, fmt.Sprintf("print(%d)", i), r.res)
		fx = append(fx,
			fixture{"messages/server-tool-use/" + r.name, "anthropic.server_tool_use", raw(t, use), nil},
			fixture{"messages/code-execution-tool-result/" + r.name, "anthropic.code_execution_tool_result", raw(t, result), nil},
		)
	}
	// A call that produced a file. Contract v1 (openapi.yaml,
	// contract.OutputFile) requires a filename in the entry, which
	// Anthropic's code_execution_output block does not have: the SDKs
	// accept it only as an unknown extra, and drop it from the request
	// param. The divergence is declared, so that it stays visible and the
	// check fails if it goes away or changes.
	id := messages.NewToolUseID()
	_, result := messages.Blocks(id, "open('out.csv', 'w').write('a,b')", port.Result{
		Stdout: "", Outcome: port.OutcomeCompleted,
		Files: []port.OutputFile{{FileID: "file_011CNha8iCJcU1wXNR6q4V8w", Filename: "out.csv"}},
	})
	fx = append(fx, fixture{"messages/code-execution-tool-result/output-file", "anthropic.code_execution_tool_result", raw(t, result),
		[]string{
			"CodeExecutionToolResultBlock: content.content[0].filename: not a field of CodeExecutionOutputBlock",
			"ContentBlock: content.content[0].filename: not a field of CodeExecutionOutputBlock",
			"CodeExecutionToolResultBlockParam: content.content[0].filename: lost in the round trip",
		}})
	return fx
}

// liveFixtures run calls on the real runtime, so the shapes also hold what
// CPython actually prints: a success, a program error after partial
// output, and a timeout after partial output.
func liveFixtures(t *testing.T) []fixture {
	t.Helper()
	p := wasmtest.New(t, nil)
	ctx, cancel := testwait.Context(t)
	defer cancel()
	var fx []fixture
	seq := 0
	for i, c := range []struct {
		name, code string
		timeout    time.Duration
		kind       responses.OutcomeKind
	}{
		{"success", "print(sum(i * i for i in range(1, 11)))", 0, responses.Success},
		{"program-error", "print('before')\nprint(undefined_name)", 0, responses.ProgramError},
		{"timeout", "print('started', flush=True)\nwhile True:\n    pass", time.Second, responses.Timeout},
	} {
		plan := newPlan(t, fmt.Sprintf("call_live_%d", i), c.code)
		o := responses.RunCall(ctx, p, plan, c.timeout)
		if o.Kind != c.kind {
			t.Fatalf("live %s: outcome %s (%v), want %s\n%s", c.name, o.Kind, o.Err, c.kind, o.FunctionOutput())
		}
		fx = append(fx,
			fixture{"live/responses/item/" + c.name, "openai.code_interpreter_call", jsonValue(t, plan.Item(o)), nil},
			fixture{"live/responses/stream/" + c.name, "openai.stream", jsonValue(t, plan.Events(o, i, &seq)), nil},
		)
		sess, err := p.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		id := messages.NewToolUseID()
		r, err := p.Execute(ctx, sess.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: c.code, Timeout: c.timeout, ToolUseID: id})
		_ = p.DestroySession(context.WithoutCancel(ctx), sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		use, result := messages.Blocks(id, c.code, r)
		fx = append(fx,
			fixture{"live/messages/server-tool-use/" + c.name, "anthropic.server_tool_use", raw(t, use), nil},
			fixture{"live/messages/code-execution-tool-result/" + c.name, "anthropic.code_execution_tool_result", raw(t, result), nil},
		)
	}
	fx = append(fx, live20250825Fixtures(t, ctx, p)...)
	fx = append(fx, liveOutputFiles(t, ctx, p)...)
	return append(fx, liveFigure(t, ctx)...)
}

// figureCell draws a matplotlib figure and leaves it open: the scientific
// profile returns it as an image, as a notebook shows it.
const figureCell = "import matplotlib.pyplot as plt\nplt.plot([1, 4, 9, 16])\nplt.title('squares');"

// liveFigure: a matplotlib figure from the scientific profile, as the
// Responses item carries it (an image output of the PNG's bytes).
func liveFigure(t *testing.T, ctx context.Context) []fixture {
	p := wasmtest.New(t, func(c wasm.Config) wasm.Config { return c.WithProfile("scientific") })
	plan := newPlan(t, "call_live_figure", figureCell)
	o := responses.RunCall(ctx, p, plan, 0)
	if o.Kind != responses.Success || len(o.Files) != 1 || o.Files[0].MimeType != "image/png" || port.InlineImageType(o.Files[0].Data) != "image/png" {
		t.Fatalf("live figure: %s %d files\n%s", o.Kind, len(o.Files), o.FunctionOutput())
	}
	item := plan.Item(o)
	if len(item.Outputs) != 1 || item.Outputs[0].Type != "image" || !strings.HasPrefix(item.Outputs[0].URL, "data:image/png;base64,") {
		t.Fatalf("live figure: item outputs %+v", item.Outputs)
	}
	return []fixture{{"live/responses/item/matplotlib-figure", "openai.code_interpreter_call", jsonValue(t, item), nil}}
}

// pngCell writes a real 1x1 PNG (and a CSV) with the standard library.
const pngCell = `import struct, zlib
def chunk(kind, data):
    body = kind + data
    return struct.pack('>I', len(data)) + body + struct.pack('>I', zlib.crc32(body))
png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 1, 1, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(b'\x00\xff\x00\x00')) + chunk(b'IEND', b'')
open('chart.png', 'wb').write(png)
open('out.csv', 'w').write('a\n1\n')
print('wrote 2 files')`

// liveOutputFiles: a call on the real runtime that produces a CSV and a
// PNG, as both projections carry it: the Responses item (its logs and the
// image), the citations of the files, and Anthropic's result block with
// its code_execution_output entries.
func liveOutputFiles(t *testing.T, ctx context.Context, p port.CodeExecutionPort) []fixture {
	plan := newPlan(t, "call_live_files", pngCell)
	o := responses.RunCall(ctx, p, plan, 0)
	if o.Kind != responses.Success || len(o.Files) != 2 || o.Files[0].Filename != "chart.png" || o.Files[0].MimeType != "image/png" || len(o.Files[0].Data) == 0 {
		t.Fatalf("live output files: %s %+v\n%s", o.Kind, o.Files, o.FunctionOutput())
	}
	item := plan.Item(o)
	if len(item.Outputs) != 2 || item.Outputs[1].Type != "image" {
		t.Fatalf("live output files: item outputs %+v", item.Outputs)
	}
	fx := []fixture{{"live/responses/item/output-files", "openai.code_interpreter_call", jsonValue(t, item), nil}}
	for _, a := range plan.FileCitations(o, "The chart is chart.png; the table is out.csv.") {
		fx = append(fx, fixture{"live/responses/file-citation/" + a.Filename, "openai.container_file_citation", jsonValue(t, a), nil})
	}

	sess, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.DestroySession(context.WithoutCancel(ctx), sess.ID)
	id := messages.NewToolUseID()
	r, err := p.Execute(ctx, sess.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: pngCell, ToolUseID: id})
	if err != nil || len(r.Files) != 2 {
		t.Fatalf("live output files: %v %+v", err, r.Files)
	}
	_, result := messages.Blocks(id, pngCell, r)
	return append(fx, fixture{"live/messages/code-execution-tool-result/output-files", "anthropic.code_execution_tool_result", raw(t, result),
		[]string{ // as for messages/code-execution-tool-result/output-file
			"CodeExecutionToolResultBlock: content.content[0].filename: not a field of CodeExecutionOutputBlock",
			"CodeExecutionToolResultBlock: content.content[1].filename: not a field of CodeExecutionOutputBlock",
			"ContentBlock: content.content[0].filename: not a field of CodeExecutionOutputBlock",
			"ContentBlock: content.content[1].filename: not a field of CodeExecutionOutputBlock",
			"CodeExecutionToolResultBlockParam: content.content[0].filename: lost in the round trip",
			"CodeExecutionToolResultBlockParam: content.content[1].filename: lost in the round trip",
		}})
}

// TestOfficialSDKsParseTheShapes is the cross-check of issue 6: the
// official SDKs parse every shape into their typed models, and the round
// trip loses no field.
func TestOfficialSDKsParseTheShapes(t *testing.T) {
	// Build the fixtures first: they need no Python, and their own
	// invariants are checked below whatever the SDKs say.
	fx := append(responsesFixtures(t), messagesFixtures(t)...)
	fx = append(fx, messages20250825Fixtures(t)...)
	fx = append(fx, liveFixtures(t)...)
	checkStreams(t, fx)

	python := sdkPython(t)
	dir := t.TempDir()
	for i, f := range fx {
		b, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%03d-%s.json", i, strings.ReplaceAll(f.Name, "/", "_"))
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The SDKs' check takes seconds, minutes on a loaded machine: no
	// deadline but the test binary's.
	ctx, cancel := testwait.Context(t)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, python, filepath.Join("testdata", "check_sdks.py"), dir).CombinedOutput()
	t.Logf("check_sdks.py (%s):\n%s", time.Since(start).Round(10*time.Millisecond), out)
	if err != nil {
		t.Fatalf("the official SDKs do not take codeport's shapes as they are (%v); the FAIL lines above name fixture, SDK type and field; fixtures are in %s", err, dir)
	}
	if want := fmt.Sprintf("checked %d fixtures, 0 failed", len(fx)); !strings.Contains(string(out), want) {
		t.Fatalf("check_sdks.py did not report %q", want)
	}
}

// checkStreams checks what a streaming client relies on beyond the SDK
// types: the standard event order, one item id and container id
// throughout, and the final item equal to the status the outcome gave.
func checkStreams(t *testing.T, fx []fixture) {
	t.Helper()
	order := []string{
		"response.output_item.added",
		"response.code_interpreter_call.in_progress",
		"response.code_interpreter_call_code.delta",
		"response.code_interpreter_call_code.done",
		"response.code_interpreter_call.interpreting",
		"response.code_interpreter_call.completed",
		"response.output_item.done",
	}
	idRE := regexp.MustCompile(`^ci_[0-9a-f]+$`)
	containerRE := regexp.MustCompile(`^cntr_gw_[0-9a-f]+$`)
	for _, f := range fx {
		if f.Kind != "openai.stream" {
			continue
		}
		events := f.Value.([]any)
		var types []string
		for _, e := range events {
			types = append(types, e.(map[string]any)["type"].(string))
		}
		if strings.Join(types, " ") != strings.Join(order, " ") {
			t.Errorf("%s: event order\n%v\nwant\n%v", f.Name, types, order)
			continue
		}
		added := events[0].(map[string]any)["item"].(map[string]any)
		done := events[len(events)-1].(map[string]any)["item"].(map[string]any)
		if !idRE.MatchString(added["id"].(string)) || !containerRE.MatchString(added["container_id"].(string)) {
			t.Errorf("%s: ids %v %v", f.Name, added["id"], added["container_id"])
		}
		if added["id"] != done["id"] || added["container_id"] != done["container_id"] {
			t.Errorf("%s: the item's ids change during the stream: %v/%v then %v/%v", f.Name, added["id"], added["container_id"], done["id"], done["container_id"])
		}
		if added["status"] != "in_progress" || (done["status"] != "completed" && done["status"] != "failed") {
			t.Errorf("%s: statuses %v then %v", f.Name, added["status"], done["status"])
		}
	}
}

func newPlan(t *testing.T, callID, code string) responses.Plan {
	t.Helper()
	args, err := json.Marshal(map[string]string{"code": code})
	if err != nil {
		t.Fatal(err)
	}
	p, err := responses.NewPlan(callID, string(args))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// jsonValue is v as the generic JSON value the packages' encoding gives.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw(t, b)
}

func raw(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

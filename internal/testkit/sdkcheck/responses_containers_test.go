package sdkcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/gateway/responses"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
)

// uploads is the gateway's file store of the check: one CSV a client
// uploaded.
type uploads struct{}

func (uploads) OpenFile(_ context.Context, _, fileID string) (string, io.ReadCloser, error) {
	if fileID != "file-numbers" {
		return "", nil, fmt.Errorf("%w: %q", containers.ErrFileNotFound, fileID)
	}
	return "numbers.csv", io.NopCloser(strings.NewReader("n\n1\n2\n3\n4\n")), nil
}

// checkResponses parses each response with the SDK's own types: the
// Response (its tools, its output items, the message's annotations), and
// each code_interpreter_call as a ResponseCodeInterpreterToolCall; the
// round trip must lose nothing (check_sdks.py's check_model). It prints
// one JSON report of what the SDK parsed, which the test reads.
const checkResponses = `
import json, os, sys
sys.path.insert(0, sys.argv[1])
from check_sdks import check_model
from openai.types.responses import Response, ResponseCodeInterpreterToolCall, ResponseOutputMessage
from openai.types.responses.response_output_text import AnnotationContainerFileCitation

problems, report = [], []
for name in sorted(n for n in os.listdir(sys.argv[2]) if n.endswith(".json")):
    with open(os.path.join(sys.argv[2], name), encoding="utf-8") as f:
        value = json.load(f)
    found = check_model(Response, value)
    problems += [f"{name}: {p}" for p in found]
    for i, item in enumerate(value["output"]):
        if item["type"] == "code_interpreter_call":
            problems += [f"{name}: output[{i}]: {p}" for p in check_model(ResponseCodeInterpreterToolCall, item)]
    if any(p.startswith("rejected") for p in found):
        continue
    r = Response.model_validate(value)
    entry = {"name": name, "calls": [], "spans": []}
    for out in r.output:
        if isinstance(out, ResponseCodeInterpreterToolCall):
            entry["calls"].append({"container_id": out.container_id, "logs": "".join(o.logs for o in out.outputs or [] if o.type == "logs")})
        elif isinstance(out, ResponseOutputMessage):
            for part in out.content:
                for a in part.annotations:
                    if not isinstance(a, AnnotationContainerFileCitation):
                        problems.append(f"{name}: annotation parsed as {type(a).__name__}")
                        continue
                    entry["spans"].append({"container_id": a.container_id, "file_id": a.file_id, "filename": a.filename, "text": part.text[a.start_index:a.end_index]})
        else:
            problems.append(f"{name}: output item parsed as {type(out).__name__}")
    report.append(entry)
for p in problems:
    print("FAIL", p)
print(json.dumps(report))
sys.exit(1 if problems else 0)
`

// sdkReport is what checkResponses prints of one response.
type sdkReport struct {
	Name  string `json:"name"`
	Calls []struct {
		ContainerID string `json:"container_id"`
		Logs        string `json:"logs"`
	} `json:"calls"`
	Spans []struct {
		ContainerID string `json:"container_id"`
		FileID      string `json:"file_id"`
		Filename    string `json:"filename"`
		Text        string `json:"text"`
	} `json:"spans"`
}

// TestSDKParsesAContainerConversation is the acceptance check of
// containers for the Responses tool: a conversation run on the real
// runtime with containers enabled, its responses built from the items
// gateway/responses makes, parsed by the official SDK's own types.
//
// The first response declares OpenAI's {"type":"auto"} container with an
// uploaded file; its first call reads the file into a variable and writes
// a file, its second call sees the variable, and the assistant's message
// cites the produced file. The second response names the container by its
// id, and its call still sees the variable.
func TestSDKParsesAContainerConversation(t *testing.T) {
	p := wasmtest.New(t, nil)
	store := containers.New(p, containers.WithFileSource(uploads{}))
	t.Cleanup(func() { _ = store.Close() })
	ctx, cancel := testwait.Context(t)
	defer cancel()
	opts := responses.Options{Enabled: true, Capabilities: capabilities, Containers: store}

	// One response: validate and open its container, run its calls in
	// order, end with the assistant's message.
	type call struct{ code, wantStdout string }
	respond := func(id, declaration string, calls []call, answer func(c *responses.Container, files []containers.File) string) (map[string]any, *responses.Container) {
		t.Helper()
		tools := []json.RawMessage{json.RawMessage(declaration)}
		if _, err := responses.ValidateTools(tools, opts); err != nil {
			t.Fatal(err)
		}
		choice, err := responses.ContainerOf(tools, opts)
		if err != nil {
			t.Fatal(err)
		}
		c, err := responses.OpenContainer(ctx, store, choice)
		if err != nil {
			t.Fatal(err)
		}
		var output []any
		var produced []containers.File
		for i, cl := range calls {
			plan := newContainerPlan(t, c, fmt.Sprintf("call_%s_%d", id, i), cl.code)
			o := c.Run(ctx, plan, 0)
			if o.Kind != responses.Success || o.Stdout != cl.wantStdout {
				t.Fatalf("%s call %d: %s, stdout %q, want %q\n%s", id, i, o.Kind, o.Stdout, cl.wantStdout, o.FunctionOutput())
			}
			output = append(output, jsonValue(t, plan.Item(o)))
			produced = append(produced, o.ContainerFiles...)
		}
		text := answer(c, produced)
		output = append(output, map[string]any{
			"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{
				"type": "output_text", "text": text,
				"annotations": jsonValue(t, responses.ContainerFileCitations(c.ID, produced, text)),
			}},
		})
		return map[string]any{
			"id": "resp_" + id, "object": "response", "created_at": 1767225600, "status": "completed",
			"model": "gpt-4.1", "output": output, "parallel_tool_calls": true, "tool_choice": "auto",
			"tools": []any{raw(t, []byte(declaration))},
		}, c
	}

	var csvPath string
	first, c := respond("first", `{"type":"code_interpreter","container":{"type":"auto","file_ids":["file-numbers"]}}`, []call{
		{"import csv\nsquares = [int(r['n']) ** 2 for r in csv.DictReader(open('numbers.csv'))]\nopen('squares.csv', 'w').write('\\n'.join(map(str, squares)))\nprint(squares)", "[1, 4, 9, 16]\n"},
		{"print('sum of squares:', sum(squares))", "sum of squares: 30\n"},
	}, func(c *responses.Container, files []containers.File) string {
		if len(files) != 1 || files[0].Name != "squares.csv" {
			t.Fatalf("produced files %+v", files)
		}
		csvPath = files[0].Path
		return "Les carrés — 1, 4, 9, 16 — sont dans [squares.csv](sandbox:" + csvPath + "); leur somme est 30."
	})
	second, c2 := respond("second", `{"type":"code_interpreter","container":"`+c.ID+`"}`, []call{
		{"print('still there:', squares)", "still there: [1, 4, 9, 16]\n"},
	}, func(*responses.Container, []containers.File) string { return "The variable is still there." })
	if c2.ID != c.ID {
		t.Fatalf("the second response runs in %s, not %s", c2.ID, c.ID)
	}

	python := sdkPython(t)
	dir := t.TempDir()
	for i, r := range []map[string]any{first, second} {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d-%s.json", i, r["id"])), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(t.TempDir(), "check_responses.py")
	if err := os.WriteFile(script, []byte(checkResponses), 0o644); err != nil {
		t.Fatal(err)
	}
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := exec.CommandContext(ctx, python, script, testdata, dir).Output()
	t.Logf("check_responses.py (%s):\n%s", time.Since(start).Round(10*time.Millisecond), out)
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Logf("stderr:\n%s", ee.Stderr)
		}
		t.Fatalf("the SDK does not take the container conversation as it is (%v); responses are in %s", err, dir)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var report []sdkReport
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &report); err != nil || len(report) != 2 {
		t.Fatalf("report: %v\n%s", err, out)
	}
	// What the SDK parsed: every call in the one container, the second
	// and third calls showing the first call's variable, and the citation
	// spanning the file's path in the text, by the SDK's own indexing.
	r1, r2 := report[0], report[1]
	if len(r1.Calls) != 2 || len(r2.Calls) != 1 {
		t.Fatalf("calls %+v %+v", r1.Calls, r2.Calls)
	}
	for _, cl := range append(r1.Calls, r2.Calls...) {
		if cl.ContainerID != c.ID {
			t.Errorf("call in %q, want %q", cl.ContainerID, c.ID)
		}
	}
	if r1.Calls[1].Logs != "sum of squares: 30\n" || r2.Calls[0].Logs != "still there: [1, 4, 9, 16]\n" {
		t.Errorf("later calls do not show the first call's variable: %q, %q", r1.Calls[1].Logs, r2.Calls[0].Logs)
	}
	if len(r1.Spans) != 1 || r1.Spans[0].Text != csvPath || r1.Spans[0].ContainerID != c.ID || r1.Spans[0].Filename != "squares.csv" || !strings.HasPrefix(r1.Spans[0].FileID, containers.FileIDPrefix) {
		t.Errorf("citation %+v, want the span %q", r1.Spans, csvPath)
	}
	if len(r2.Spans) != 0 {
		t.Errorf("second response cites %+v", r2.Spans)
	}
}

func newContainerPlan(t *testing.T, c *responses.Container, callID, code string) responses.Plan {
	t.Helper()
	args, err := json.Marshal(map[string]string{"code": code})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.NewPlan(callID, string(args))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

package wasm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/codeport/codeport/port"
)

func readOutput(t *testing.T, a *testAdapter, id, fileID string) string {
	t.Helper()
	rc, _, err := a.GetOutputFile(context.Background(), id, fileID)
	if err != nil {
		t.Fatalf("GetOutputFile(%s): %v", fileID, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A call that writes more files than a result lists says so, and lists
// the first it wrote; the next call does not list them again.
func TestResultsListAtMostMaxOutputsAndSaySo(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	res := run(t, a, id, fmt.Sprintf("import os\nos.mkdir('d')\nfor i in range(%d):\n    open(f'd/{i:03}', 'w').write(str(i))", maxOutputsPerCall+5))
	if len(res.Files) != maxOutputsPerCall {
		t.Fatalf("%d files listed, want %d", len(res.Files), maxOutputsPerCall)
	}
	if res.Files[0].Filename != "d/000" || readOutput(t, a, id, res.Files[7].FileID) != "7" {
		t.Fatalf("first listed %q; the 8th holds %q", res.Files[0].Filename, readOutput(t, a, id, res.Files[7].FileID))
	}
	if want := fmt.Sprintf("more files than the %d a result lists (5 not listed)", maxOutputsPerCall); !strings.Contains(res.Stderr, want) {
		t.Fatalf("stderr %q does not say %q", res.Stderr, want)
	}
	if res := run(t, a, id, "print(len(__import__('os').listdir('d')))"); res.Stdout != "105\n" || len(res.Files) != 0 || res.Stderr != "" {
		t.Fatalf("a reading call: %q, %d files, stderr %q", res.Stdout, len(res.Files), res.Stderr)
	}
}

// A produced file that no copy fits beside (the workspace limit) is still
// the program's, but not listed: the result says so and names it.
func TestAnOutputWithoutRoomForACopyIsNamed(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithWorkspaceLimit(1 << 20) })
	id := newSession(t, a)
	res := run(t, a, id, "open('small.txt','w').write('s')\nopen('big.bin','wb').write(b'x' * 700_000)")
	if len(res.Files) != 1 || res.Files[0].Filename != "small.txt" {
		t.Fatalf("files %+v", res.Files)
	}
	if !strings.Contains(res.Stderr, `1 produced file was not kept for retrieval by file id`) || !strings.Contains(res.Stderr, `["big.bin"]`) {
		t.Fatalf("stderr %q", res.Stderr)
	}
	if res.ReturnCode != 0 || res.Outcome != port.OutcomeCompleted {
		t.Fatalf("the program was failed by its output's copy: %+v", res)
	}
	// The program's next write fills the workspace to its last byte, which
	// small.txt's copy held: it gets it, and that copy is gone.
	small := res.Files[0].FileID
	res = run(t, a, id, fmt.Sprintf("open('more.bin','wb').write(b'y' * %d)\nprint('ok')", 1<<20-700_001))
	if res.Stdout != "ok\n" || strings.Contains(res.Stderr, "workspace limit of") {
		t.Fatalf("a write that copies could make room for: %q %q", res.Stdout, res.Stderr)
	}
	if _, _, err := a.GetOutputFile(context.Background(), id, small); !errors.Is(err, port.ErrFileNotFound) || !strings.Contains(err.Error(), "dropped to make room") {
		t.Fatalf("GetOutputFile of a dropped copy: %v", err)
	}
}

// The editor's writes and the shell's are produced files too, and so is
// what a python command of the shell writes.
func TestEveryToolListsWhatItWrote(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	ctx := context.Background()
	res, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{Command: port.EditorCreate, Path: "notes.md", FileText: ptr("# n\n")}})
	if err != nil || len(res.Files) != 1 || res.Files[0].Filename != "notes.md" || readOutput(t, a, id, res.Files[0].FileID) != "# n\n" {
		t.Fatalf("editor: %+v %v", res.Files, err)
	}
	res, err = a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "echo hi > a.txt; mv a.txt b.txt; python3 -c \"open('c.txt','w').write('c')\"; echo tmp > /tmp/t; cat notes.md >/dev/null"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range res.Files {
		names = append(names, f.Filename)
	}
	if strings.Join(names, " ") != "b.txt c.txt" {
		t.Fatalf("bash listed %q (stderr %q)", names, res.Stderr)
	}
	if got := readOutput(t, a, id, res.Files[0].FileID); got != "hi\n" {
		t.Fatalf("b.txt's output holds %q", got)
	}
}

func ptr(s string) *string { return &s }
